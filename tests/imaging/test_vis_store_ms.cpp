// The VisStore made from an MS (imaging/image_run make_vis_store) against image_run on the same MS
// and settings: the first inversion takes the same code path, so the dirty images, PSFs, Σcw and
// plans agree to 1e-12 of the peak (not bit-identical: invert_cpu adds its threads' grids in
// whichever order they finish). With a GPU, the GPU store's first inversion agrees to 1e-5.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "clean/errors.hpp"
#include "imaging/image_run.hpp"
#include "io/ms/ms_metadata.hpp"
#ifdef GPUCLEAN_HAVE_CUDA
#include "select/cuda/device_info.hpp"
#endif
#include "tests/io/ms_test_files.hpp"
#include "tests/imaging/vis_store_samples.hpp"

namespace gpuclean::imaging {
namespace {

constexpr double kAsec = M_PI / 180 / 3600;

std::vector<io::ms::MsSelection> simulated(const test::TempDir& dir) {
  const std::string ms = dir.file("a.ms");
  test::run_python(dir, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                            " --sky points --antennas 16 --hours 2 --integration 600 --channels 2 --noise 0");
  return io::ms::select_visibilities({io::ms::read_ms_metadata(ms)}, {});
}

ImageRunSettings settings() {
  ImageRunSettings s;
  s.image = {128, 128, 4 * kAsec};
  s.weighting = {.mode = WeightMode::kBriggs, .rank_filter_level = 0};
  s.channels_out = 2;
  s.make_psf = true;
  s.threads = 2;
  return s;
}

TEST(VisStoreMs, FirstInversionIsImageRuns) {
  test::TempDir dir;
  const std::vector<io::ms::MsSelection> sel = simulated(dir);
  const ImageRunSettings s = settings();
  const ImageRunResult run = image_run(sel, s);
  std::vector<ChannelImage> headers;
  VisStore store = make_vis_store(sel, s, &headers);
  ASSERT_EQ(store.channels(), 2u);
  ASSERT_EQ(headers.size(), 2u);
  for (std::size_t c = 0; c < 2; ++c) {
    const std::vector<double> psf = store.invert_psf(c), dirty = store.invert_dirty(c);
    EXPECT_LE(test_samples::max_relative_difference(psf, run.channels[c].psf), 1e-12);
    EXPECT_LE(test_samples::max_relative_difference(dirty, run.channels[c].dirty), 1e-12);
    std::printf("channel %zu: psf %.2e, dirty %.2e of the peak\n", c, test_samples::max_relative_difference(psf, run.channels[c].psf),
                test_samples::max_relative_difference(dirty, run.channels[c].dirty));
    EXPECT_NEAR(store.psf_centre(c), run.channels[c].psf_centre, 1e-12);
    EXPECT_EQ(store.sum_cw(c), run.channels[c].imgwg);
    EXPECT_EQ(headers[c].imgwg, run.channels[c].imgwg);
    EXPECT_EQ(headers[c].w_planes, run.channels[c].w_planes);
    EXPECT_EQ(headers[c].theoretic_beam_rad, run.channels[c].theoretic_beam_rad);
    EXPECT_EQ(headers[c].counters.visibilities, run.channels[c].counters.visibilities);
    EXPECT_LE(test_samples::max_relative_difference(store.invert_residual(c), dirty), 1e-12);  // nothing predicted yet
  }
}

#ifdef GPUCLEAN_HAVE_CUDA
TEST(VisStoreMs, GpuFirstInversionIsImageRuns) {
  if (!cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
  test::TempDir dir;
  const std::vector<io::ms::MsSelection> sel = simulated(dir);
  ImageRunSettings s = settings();
  const ImageRunResult run = image_run(sel, s);  // on the CPU
  s.device = clean::Device::kGpu;
  VisStore gpu = make_vis_store(sel, s);
  EXPECT_NE(gpu.describe().find("resident on GPU"), std::string::npos) << gpu.describe();
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_LE(test_samples::max_relative_difference(gpu.invert_psf(c), run.channels[c].psf), 1e-5) << c;
    EXPECT_LE(test_samples::max_relative_difference(gpu.invert_dirty(c), run.channels[c].dirty), 1e-5) << c;
    EXPECT_NEAR(gpu.psf_centre(c), run.channels[c].psf_centre, 1e-6) << c;
  }
}
#endif

}  // namespace
}  // namespace gpuclean::imaging

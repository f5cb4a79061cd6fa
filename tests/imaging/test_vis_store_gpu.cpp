// The VisStore's GPU backend (imaging/gpu/vis_store_gpu) against the CPU VisStore, call by call
// (major-cycle-plan.md §3): PSF, dirty image, residual after a predict, and after a second
// predict that replaces the first; resident on the device, and streamed from the host when the
// budget is too small for residency. Only float summation order differs (to 1e-5 of the peak, as
// the gridder's own GPU-against-CPU bound in test_gridder_gpu). Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "imaging/gpu/vis_store_gpu.hpp"
#include "imaging/vis_store.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/imaging/direct_ft.hpp"
#include "tests/imaging/vis_store_samples.hpp"

namespace gpuclean::imaging {
namespace {

using namespace direct_ft;  // kArcsec, kThreads
using test_samples::max_relative_difference;

constexpr double kVsCpu = 1e-5;  // of the CPU image's peak
const ImageGeometry kImage{256, 256, 10 * kArcsec};

ChannelSamples random_samples(std::size_t n, std::uint64_t seed) {
  return test_samples::random_channel_samples(n, kImage.scale, 300, seed);
}

std::vector<double> model(std::size_t seed) {
  return test_samples::random_point_model(kImage.width, kImage.height, seed);
}

/// Each store's images, call after call.
std::vector<std::vector<double>> run(VisStore& store, const std::vector<ChannelSamples>& channels) {
  for (const ChannelSamples& s : channels) {
    double sum = 0;
    for (float x : s.cw) sum += x;
    store.add_channel(s, sum);
  }
  std::vector<std::vector<double>> images;
  for (std::size_t c = 0; c < channels.size(); ++c) {
    images.push_back(store.invert_psf(c));
    images.push_back(store.invert_dirty(c));
    images.push_back(store.invert_residual(c));  // no model yet: the dirty image
    store.predict(c, model(c));
    images.push_back(store.invert_residual(c));
    store.predict(c, model(c + 10));  // replaces the first model
    images.push_back(store.invert_residual(c));
  }
  return images;
}

void expect_like_cpu(std::size_t budget_bytes, const std::string& where) {
  if (!cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
  const std::vector<ChannelSamples> channels = {random_samples(400000, 3), random_samples(30000, 5)};
  VisStore cpu({kImage, 1e-4, kThreads});
  const std::vector<std::vector<double>> ref = run(cpu, channels);
  VisStore gpu({kImage, 1e-4, kThreads});
  GpuGridderOptions options;
  options.budget_bytes = budget_bytes;
  gpu.set_backend(make_gpu_vis_store_backend(options));
  const std::vector<std::vector<double>> ours = run(gpu, channels);
  EXPECT_NE(gpu.describe().find(where), std::string::npos) << gpu.describe();
  const char* what[] = {"psf", "dirty", "residual without a model", "residual", "residual of the second model"};
  ASSERT_EQ(ours.size(), ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i)
    EXPECT_LE(max_relative_difference(ours[i], ref[i]), kVsCpu) << "channel " << i / 5 << ", " << what[i % 5];
  // The residual differs from the dirty image (a model was subtracted on the device).
  EXPECT_GT(max_relative_difference(ours[3], ours[1]), 1e-2);
}

TEST(VisStoreGpu, ResidentEqualsCpu) { expect_like_cpu(0, "resident on GPU"); }

// 100 MB: the gridder's fixed part (64 MiB of slack, a 512² grid) and chunks of the larger
// channel fit, but not all 430000 samples at ~140 B each beside them.
TEST(VisStoreGpu, StreamedEqualsCpu) { expect_like_cpu(std::size_t{100} << 20, "streamed"); }

}  // namespace
}  // namespace gpuclean::imaging

// WSClean's -parallel-deconvolution (clean/parallel_deconvolution.hpp): the division into
// sub-images along seams of least |residual|, and rounds in which every sub-image cleans its own
// area with its own budget down to one floor, against an exact re-imaging (direct convolution).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "clean/parallel_deconvolution.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/synthetic_cube.hpp"

namespace gc = gpuclean::clean;
namespace gt = gpuclean::test;

namespace {

std::vector<const float*> pointers(const std::vector<gc::HostImage>& images) {
  std::vector<const float*> out;
  for (const gc::HostImage& i : images) out.push_back(i.pixels.data());
  return out;
}

// Every pixel is one sub-image's; the grid is ceil(W/N) x ceil(H/N); a seam goes round a bright
// line across its band instead of through it.
TEST(DivideImage, PartitionsAlongQuietSeams) {
  const std::size_t w = 100, h = 80;
  gc::HostImage image(w, h, 0.01f);
  // A bright blob across the even split at x = 50, rows 30..49: the seam must pass beside it.
  for (std::size_t y = 30; y < 50; ++y)
    for (std::size_t x = 46; x < 55; ++x) image.at(x, y) = 5.0f;
  const std::vector<gc::SubImage> subs = gc::divide_image(image, 50);
  ASSERT_EQ(subs.size(), 2u * 2u);
  std::vector<int> owners(w * h, 0);
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const gc::SubImage& s = subs[i];
    ASSERT_LE(s.x + s.width, w);
    ASSERT_LE(s.y + s.height, h);
    for (std::size_t y = 0; y < s.height; ++y)
      for (std::size_t x = 0; x < s.width; ++x)
        if (s.area[y * s.width + x]) ++owners[(s.y + y) * w + s.x + x];
  }
  EXPECT_TRUE(std::all_of(owners.begin(), owners.end(), [](int o) { return o == 1; })) << "a pixel owned twice or never";
  // The blob's pixels of one row are all one sub-image's (the vertical seam went round it).
  for (std::size_t y = 30; y < 50; ++y) {
    std::set<std::size_t> which;
    for (std::size_t x = 46; x < 55; ++x)
      for (std::size_t i = 0; i < subs.size(); ++i) {
        const gc::SubImage& s = subs[i];
        if (x >= s.x && x < s.x + s.width && y >= s.y && y < s.y + s.height && s.area[(y - s.y) * s.width + x - s.x])
          which.insert(i);
      }
    EXPECT_EQ(which.size(), 1u) << "row " << y;
  }
  EXPECT_EQ(gc::divide_image(image, 100).size(), 1u);
  EXPECT_EQ(gc::divide_image(image, 30).size(), 4u * 3u);
}

class ParallelDeconvolution : public gt::DeviceTest {};

// Four sources, one in each quadrant, cleaned in 2 x 2 sub-images over rounds with an exact
// re-imaging: the model reaches the truth, and each sub-image's budget is its own (the components
// of all exceed one -niter).
TEST_P(ParallelDeconvolution, SubImagesCleanTheirAreas) {
  const std::size_t n = 128;
  gt::SyntheticCube cube;
  gt::make_cube(cube, n, 1, 0.1e9, {{30, 30, 2.0, 0.0}, {95, 28, 1.5, 0.0}, {33, 97, 1.0, 0.0}, {99, 93, 0.5, 0.0}});
  gc::OuterLoopInput in;
  in.width = in.height = n;
  in.psfs = {cube.psf[0].image};
  in.frequencies_hz = {cube.freqs[0]};
  in.weights = {1.0};
  gc::CleanSettings s;
  s.device = GetParam();
  s.threads = 2;
  s.auto_threshold = 0.0;
  s.threshold = 2e-3;
  s.beam_patch = 16;
  std::vector<gc::HostImage> current = {cube.dirty[0]};
  gc::ParallelDeconvolution run(s, in, pointers(current), 64);
  ASSERT_EQ(run.sub_images(), 4u);
  std::size_t rounds = 0, components = 0;
  for (bool more = true; more && rounds < 30; ++rounds) {
    if (rounds > 0) run.set_residuals(pointers(current));
    const gc::OuterLoopRound r = run.clean(0.0, 0.5, 100000, nullptr);
    components += r.components;
    more = r.round_floor;
    const gc::HostImage predicted = gt::convolve_direct(run.models()[0], cube.psf[0]);
    current[0] = cube.dirty[0];
    for (std::size_t i = 0; i < predicted.size(); ++i) current[0].pixels[i] -= predicted.pixels[i];
  }
  EXPECT_GE(rounds, 2u);
  EXPECT_LT(rounds, 30u);
  double flux = 0;
  const std::vector<gc::HostImage> models = run.models();  // held: a temporary's member dies before the loop
  for (float v : models[0].pixels) flux += v;
  EXPECT_NEAR(flux, 5.0, 0.02 * 5.0);
  EXPECT_EQ(run.result().stop.iterations, components);
  // A budget of 40 each: more than 40 components in all, and the run ends with the budget.
  gc::ParallelDeconvolution small(s, in, pointers({cube.dirty[0]}), 64);
  const gc::OuterLoopRound r = small.clean(0.0, 1.0, 40, nullptr);
  EXPECT_GT(r.components, 40u);
  EXPECT_EQ(r.reason, gc::StopReason::kMaxIterations);
}

INSTANTIATE_TEST_SUITE_P(Devices, ParallelDeconvolution, ::testing::Values(gc::Device::kCpu, gc::Device::kGpu),
                         [](const ::testing::TestParamInfo<gc::Device>& i) {
                           return i.param == gc::Device::kCpu ? "Cpu" : "Gpu";
                         });

}  // namespace

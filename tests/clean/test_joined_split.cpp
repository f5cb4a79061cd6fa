// A joined run split over GPUs (JoinedSplitGpu, JoinedPlanes::split_gpus) against the same run
// on one GPU (JoinedPlanesGpu), bit for bit: the iterations and cycles, every component and its
// plane fluxes and spectral terms, every plane's residual, model and restored image, and the
// integrated images. On one GPU the split uses the list {g, g} (and {g, g, g}): the blocks share
// the device, so every copy, the order of work across streams and the integration chain are
// checked on any GPU machine; the all-GPUs case skips below two.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "clean/deconvolver.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/joined_sky.hpp"
#include "tests/support/synthetic_cube.hpp"

namespace gc = gpuclean::clean;
using gpuclean::test::random_sky;
using gpuclean::test::SpectralSource;
using gpuclean::test::SyntheticCube;

namespace {

gc::CleanResult run_on_gpu(const gc::JoinedPlanes& planes, const gc::CleanSettings& s) {
  return gpuclean::test::run_joined(planes, s, gc::Device::kGpu);
}

// The cube cleaned on one GPU and split over `gpus`: the same floats everywhere.
void expect_split_is_one_gpu(gc::JoinedPlanes& planes, const gc::CleanSettings& s, const std::vector<int>& gpus) {
  planes.split_gpus.clear();
  const gc::CleanResult one = run_on_gpu(planes, s);
  planes.split_gpus = gpus;
  const gc::CleanResult split = run_on_gpu(planes, s);
  planes.split_gpus.clear();
  const std::size_t np = planes.planes.size();
  ASSERT_GT(one.stop.iterations, 200u);
  ASSERT_EQ(split.stop.iterations, one.stop.iterations);
  EXPECT_EQ(split.stop.major_cycles, one.stop.major_cycles);
  EXPECT_EQ(split.stop.reason, one.stop.reason);
  ASSERT_EQ(split.components.list.size(), one.components.list.size());
  for (std::size_t k = 0; k < one.components.list.size(); ++k) {
    ASSERT_EQ(split.components.list[k].x, one.components.list[k].x) << k;
    ASSERT_EQ(split.components.list[k].y, one.components.list[k].y) << k;
    ASSERT_EQ(split.components.list[k].scale, one.components.list[k].scale) << k;
    ASSERT_EQ(split.components.list[k].flux, one.components.list[k].flux) << k;
  }
  ASSERT_EQ(split.components.plane_fluxes.size(), one.components.list.size() * np);
  EXPECT_EQ(split.components.plane_fluxes, one.components.plane_fluxes);
  EXPECT_EQ(split.components.spectral_terms, one.components.spectral_terms);
  ASSERT_EQ(split.images.planes.size(), np);
  for (std::size_t p = 0; p < np; ++p) {
    EXPECT_EQ(split.images.planes[p].residual.pixels, one.images.planes[p].residual.pixels) << "plane " << p;
    EXPECT_EQ(split.images.planes[p].model.pixels, one.images.planes[p].model.pixels) << "plane " << p;
    EXPECT_EQ(split.images.planes[p].restored.pixels, one.images.planes[p].restored.pixels) << "plane " << p;
  }
  EXPECT_EQ(split.images.residual.pixels, one.images.residual.pixels);
  EXPECT_EQ(split.images.model.pixels, one.images.model.pixels);
  EXPECT_EQ(split.images.restored.pixels, one.images.restored.pixels);
  std::printf("  %zu planes over %zu blocks: %zu components, %zu major cycles\n", np, gpus.size(),
              split.stop.iterations, split.stop.major_cycles);
}

// The cases of §3 of docs/design/multi-gpu-plan.md, each on `gpus`.
void clark(const std::vector<int>& gpus) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, random_sky(256, 40, 3), 1e-3);
  gc::CleanSettings s;
  s.niter = 5000;
  expect_split_is_one_gpu(cube.planes, s, gpus);
}

void multiscale_fitted(const std::vector<int>& gpus) {
  SyntheticCube cube;
  std::vector<SpectralSource> sky = random_sky(256, 30, 8);
  for (std::size_t i = 0; i < 4; ++i) sky[i].sigma = 3.0 + 2.0 * static_cast<double>(i);
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, sky, 1e-3);
  cube.planes.fit.terms = 2;
  gc::CleanSettings s;
  s.niter = 5000;
  s.multiscale.enabled = true;
  expect_split_is_one_gpu(cube.planes, s, gpus);
}

void polarizations(const std::vector<int>& gpus) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 4, 0.4e9, random_sky(256, 30, 5), 1e-3);
  cube.planes.join = gc::Join::kPolarizations;
  gc::CleanSettings s;
  s.niter = 5000;
  expect_split_is_one_gpu(cube.planes, s, gpus);
}

// --auto-mask changes the clean mask mid-run and --local-rms weighs the search.
void auto_mask_local_rms(const std::vector<int>& gpus) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, random_sky(256, 40, 6), 1e-3);
  gc::CleanSettings s;
  s.niter = 5000;
  s.auto_mask = 6.0;
  s.auto_threshold = 1.0;
  s.local_rms.enabled = true;
  expect_split_is_one_gpu(cube.planes, s, gpus);
}

std::vector<int> twice_current() { return {gpuclean::cuda::current_gpu(), gpuclean::cuda::current_gpu()}; }

// Every visible GPU, the current one first (the run is on the first); GTEST_SKIP below two.
std::vector<int> all_gpus(std::size_t most) {
  const int current = gpuclean::cuda::current_gpu();
  std::vector<int> out{current};
  for (int d = 0; d < gpuclean::cuda::device_count() && out.size() < most; ++d)
    if (d != current) out.push_back(d);
  return out;
}

}  // namespace

using JoinedSplitOneGpu = gpuclean::test::GpuTest;

TEST_F(JoinedSplitOneGpu, ClarkEightChannels) { clark(twice_current()); }
TEST_F(JoinedSplitOneGpu, ClarkEightChannelsInThreeUnequalBlocks) {
  const int g = gpuclean::cuda::current_gpu();
  clark({g, g, g});  // blocks of 3, 3 and 2: the chain's middle link
}
TEST_F(JoinedSplitOneGpu, MultiscaleEightChannelsFittedWithTwoTerms) { multiscale_fitted(twice_current()); }
TEST_F(JoinedSplitOneGpu, FourPolarizations) { polarizations(twice_current()); }
TEST_F(JoinedSplitOneGpu, EightChannelsWithAutoMaskAndLocalRms) { auto_mask_local_rms(twice_current()); }

class JoinedSplitAllGpus : public gpuclean::test::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (gpuclean::cuda::device_count() < 2)
      GTEST_SKIP() << "one GPU: the split over several GPUs needs two";
  }
};

TEST_F(JoinedSplitAllGpus, ClarkEightChannels) { clark(all_gpus(8)); }
TEST_F(JoinedSplitAllGpus, MultiscaleEightChannelsFittedWithTwoTerms) { multiscale_fitted(all_gpus(8)); }
TEST_F(JoinedSplitAllGpus, FourPolarizations) { polarizations(all_gpus(4)); }
TEST_F(JoinedSplitAllGpus, EightChannelsWithAutoMaskAndLocalRms) { auto_mask_local_rms(all_gpus(8)); }

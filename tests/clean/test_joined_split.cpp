// A joined run split over GPUs (JoinedSplitGpu, JoinedPlanes::split_gpus) against the same run
// on one GPU (JoinedPlanesGpu), bit for bit: the iterations and cycles, every component and its
// plane fluxes and spectral terms, every plane's residual, model and restored image, and the
// integrated images. On one GPU the split uses the list {g, g} (and {g, g, g}): the blocks share
// the device, so every copy, the order of work across streams and the integration chain are
// checked on any GPU machine; the all-GPUs case skips below two.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "clean/deconvolution.hpp"
#include "clean/deconvolver.hpp"
#include "clean/errors.hpp"
#include "clean/run_plan.hpp"
#include "clean/work_table.hpp"
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

// The same floats to the bit (+0 and -0 apart, NaN equal to itself).
::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " vs " << b.size() << " values";
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "value " << i << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionSuccess();
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
    ASSERT_EQ(std::memcmp(&split.components.list[k].flux, &one.components.list[k].flux, sizeof(float)), 0) << k;
  }
  ASSERT_EQ(split.components.plane_fluxes.size(), one.components.list.size() * np);
  EXPECT_TRUE(same_bits(split.components.plane_fluxes, one.components.plane_fluxes));
  EXPECT_EQ(split.components.spectral_terms, one.components.spectral_terms);
  ASSERT_EQ(split.images.planes.size(), np);
  for (std::size_t p = 0; p < np; ++p) {
    EXPECT_TRUE(same_bits(split.images.planes[p].residual.pixels, one.images.planes[p].residual.pixels)) << "plane " << p;
    EXPECT_TRUE(same_bits(split.images.planes[p].model.pixels, one.images.planes[p].model.pixels)) << "plane " << p;
    EXPECT_TRUE(same_bits(split.images.planes[p].restored.pixels, one.images.planes[p].restored.pixels)) << "plane " << p;
  }
  EXPECT_TRUE(same_bits(split.images.residual.pixels, one.images.residual.pixels));
  EXPECT_TRUE(same_bits(split.images.model.pixels, one.images.model.pixels));
  EXPECT_TRUE(same_bits(split.images.restored.pixels, one.images.restored.pixels));
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

// split_gpus takes the run to JoinedSplitGpu (else the comparisons above would hold trivially): it
// refuses a group both split and streamed.
TEST_F(JoinedSplitOneGpu, SplitGpusTakeTheRunToTheSplit) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 64, 4, 0.4e9, random_sky(64, 5, 13), 1e-3);
  gc::CleanSettings s;
  s.niter = 100;
  cube.planes.device_planes = 2;
  EXPECT_NO_THROW(run_on_gpu(cube.planes, s));
  cube.planes.split_gpus = twice_current();
  EXPECT_THROW(run_on_gpu(cube.planes, s), gc::InvalidSettings);
}

// The plan splits a joined group over the GPUs it is given when asked (PlanRequest::split_joined),
// one group at a time and with less on each GPU than the whole needs, and the Deconvolution that
// follows it (GroupProblem's split_gpus) gives the unsplit plan's result.
TEST_F(JoinedSplitOneGpu, ThePlanSplitsWhenAskedAndTheRunFollowsIt) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, random_sky(256, 30, 12), 1e-3);
  gc::WorkTable t;
  t.width = t.height = 256;
  t.channels = 8;
  for (std::size_t c = 0; c < 8; ++c)
    t.planes.push_back({&cube.dirty[c], &cube.psf[c], c, 0, "I", cube.freqs[c], 1.0, nullptr});
  gc::CleanSettings s;
  s.niter = 2000;
  s.join_channels = true;
  s.device = gc::Device::kGpu;
  gc::group_planes(t, s);
  ASSERT_EQ(t.groups.size(), 1u);
  const int g = gpuclean::cuda::current_gpu();
  gc::PlanRequest request;
  request.gpus = {g, g};
  const gc::RunPlan whole = gc::plan_run(t, s, gc::Device::kGpu, request);
  EXPECT_TRUE(whole.split_gpus.empty()) << "it fits one GPU: no split unless asked";
  request.split_joined = true;
  const gc::RunPlan split = gc::plan_run(t, s, gc::Device::kGpu, request);
  EXPECT_EQ(split.split_gpus, (std::vector<int>{g, g}));
  EXPECT_EQ(split.workers, 1u);
  EXPECT_LT(split.gpu_bytes, whole.gpu_bytes);
  const std::vector<gc::CleanResult> a = gc::Deconvolution(s, t, whole).run();
  const std::vector<gc::CleanResult> b = gc::Deconvolution(s, t, split).run();
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  ASSERT_GT(a[0].stop.iterations, 100u);
  EXPECT_EQ(b[0].stop.iterations, a[0].stop.iterations);
  EXPECT_TRUE(same_bits(b[0].components.plane_fluxes, a[0].components.plane_fluxes));
  ASSERT_EQ(b[0].images.planes.size(), 8u);
  for (std::size_t p = 0; p < 8; ++p)
    EXPECT_TRUE(same_bits(b[0].images.planes[p].residual.pixels, a[0].images.planes[p].residual.pixels)) << p;
}

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

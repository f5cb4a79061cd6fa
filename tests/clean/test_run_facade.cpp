// The run facade: the work table's groups (the join decided once), the problem it makes for a
// group, the run plan (device, memory fit, CPU fallback) and the Deconvolution that cleans every
// group, against the algorithm run directly on the same problem.

#include <gtest/gtest.h>

#include <stdexcept>

#include "clean/clean_mask.hpp"
#include "clean/deconvolution.hpp"
#include "clean/errors.hpp"
#include "clean/image_stats.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/synthetic_cube.hpp"

namespace gc = gpuclean::clean;
namespace gt = gpuclean::test;

namespace {

// A cube's planes in its layout (Stokes-major: plane (c, p) at p * channels + c).
gc::WorkTable table_of(const gt::SyntheticCube& cube, std::size_t channels, std::size_t pols) {
  gc::WorkTable t;
  t.width = cube.dirty.front().width;
  t.height = cube.dirty.front().height;
  t.channels = channels;
  t.polarizations = pols;
  for (std::size_t p = 0; p < pols; ++p)
    for (std::size_t c = 0; c < channels; ++c) {
      const std::size_t i = (p * channels + c) % cube.dirty.size();
      t.planes.push_back({&cube.dirty[i], &cube.psf[i], c, p, p == 0 ? "XX" : "YY", cube.freqs[i % cube.freqs.size()],
                          1.0 + 0.1 * static_cast<double>(c)});
    }
  return t;
}

gc::CleanSettings cpu_settings() {
  gc::CleanSettings s;
  s.device = gc::Device::kCpu;
  s.niter = 200;
  s.auto_threshold = 0.0;
  s.threshold = 0.01;
  return s;
}

class RunFacade : public ::testing::Test {
 protected:
  void SetUp() override {
    gt::make_cube(cube_, 64, 4, 0.3e9, {{20, 30, 1.0, -0.7}, {41, 22, 0.5, 0.3}});
  }
  gt::SyntheticCube cube_;
};

}  // namespace

TEST_F(RunFacade, TheJoinIsDecidedOnceFromTheSettingsAndTheLayout) {
  gc::WorkTable t = table_of(cube_, 2, 2);
  gc::CleanSettings s = cpu_settings();
  gc::group_planes(t, s);  // neither join: every plane alone, in table order
  EXPECT_FALSE(t.join);
  EXPECT_EQ(t.groups, (std::vector<std::vector<std::size_t>>{{0}, {1}, {2}, {3}}));

  s.join_channels = true;
  gc::group_planes(t, s);  // one group per polarization, its channels in order
  EXPECT_EQ(t.join, gc::Join::kChannels);
  EXPECT_EQ(t.groups, (std::vector<std::vector<std::size_t>>{{0, 1}, {2, 3}}));

  s.join_channels = false;
  s.join_polarizations = true;
  gc::group_planes(t, s);  // one group per channel, its polarizations in order
  EXPECT_EQ(t.join, gc::Join::kPolarizations);
  EXPECT_EQ(t.groups, (std::vector<std::vector<std::size_t>>{{0, 2}, {1, 3}}));

  gc::WorkTable one_channel = table_of(cube_, 1, 2);
  s.join_polarizations = false;
  s.join_channels = true;
  EXPECT_THROW(gc::group_planes(one_channel, s), gc::InvalidSettings);

  // Another program's loop: everything it handed over, joined as it came; never both at once.
  gc::WorkTable handed = table_of(cube_, 4, 1);
  gc::group_planes(handed, cpu_settings(), gc::JoinRule::kTable);
  EXPECT_EQ(handed.join, gc::Join::kChannels);
  EXPECT_EQ(handed.groups, (std::vector<std::vector<std::size_t>>{{0, 1, 2, 3}}));
  gc::WorkTable both = table_of(cube_, 2, 2);
  EXPECT_THROW(gc::group_planes(both, cpu_settings(), gc::JoinRule::kTable), gc::InvalidSettings);
}

TEST_F(RunFacade, AGroupsProblemIsItsPlaneOrItsIntegratedImage) {
  gc::CleanSettings s = cpu_settings();
  s.clean_border_percent = 10.0;
  gc::WorkTable t = table_of(cube_, 4, 1);
  gc::group_planes(t, s);
  const gc::GroupProblem alone(t, 2, s);
  EXPECT_FALSE(alone.joined());
  EXPECT_EQ(&alone.problem().dirty, &cube_.dirty[2]);
  EXPECT_EQ(alone.problem().mask, gc::make_clean_mask(cube_.dirty[2], nullptr, 10.0));
  EXPECT_EQ(alone.problem().restoring_beam, nullptr);  // no beam in the table: no restoration

  s.join_channels = true;
  gc::group_planes(t, s);
  const gc::GroupProblem joined(t, 0, s);
  ASSERT_TRUE(joined.joined());
  ASSERT_NE(joined.problem().joined, nullptr);
  const gc::JoinedPlanes& planes = *joined.problem().joined;
  ASSERT_EQ(planes.planes.size(), 4u);
  EXPECT_EQ(planes.planes[3].dirty, &cube_.dirty[3]);
  EXPECT_DOUBLE_EQ(planes.planes[3].weight, 1.3);
  // The integrated image is the planes' weighted mean, as joined_problem_images makes it.
  const gc::JoinedProblemImages expected = gc::joined_problem_images(planes);
  EXPECT_EQ(joined.problem().dirty.pixels, expected.dirty.pixels);
  EXPECT_EQ(joined.problem().psf.image.pixels, expected.psf.image.pixels);
}

TEST_F(RunFacade, TheFacadeCleansEachGroupAsTheAlgorithmDoesAlone) {
  gc::CleanSettings s = cpu_settings();
  s.join_channels = true;
  gc::WorkTable t = table_of(cube_, 4, 1);
  gc::group_planes(t, s);
  const gc::RunPlan plan = gc::plan_run(t, s, gc::Device::kCpu);
  EXPECT_EQ(plan.device, gc::Device::kCpu);
  EXPECT_EQ(plan.workers, 1u);
  const std::vector<gc::CleanResult> results = gc::Deconvolution(s, t, plan).run();
  ASSERT_EQ(results.size(), 1u);

  // The same problem by hand, run directly.
  const gc::JoinedProblemImages img = gc::joined_problem_images(cube_.planes);
  gc::JoinedPlanes planes = cube_.planes;
  planes.fit = s.spectral_fit();
  const std::vector<std::uint8_t> mask = gc::make_clean_mask(img.dirty, nullptr, 0.0);
  gc::CleanProblem problem{img.dirty, img.psf, mask};
  problem.joined = &planes;
  const gc::CleanResult direct = gc::make_deconvolver(s.algorithm, gc::Device::kCpu)->run(problem, s, {});
  ASSERT_GT(direct.stop.iterations, 10u);
  EXPECT_EQ(results[0].stop.iterations, direct.stop.iterations);
  EXPECT_EQ(results[0].images.residual.pixels, direct.images.residual.pixels);
  EXPECT_EQ(results[0].components.plane_fluxes, direct.components.plane_fluxes);

  // Independent planes: one result per plane, each the plane's own run.
  s.join_channels = false;
  gc::group_planes(t, s);
  const std::vector<gc::CleanResult> each = gc::Deconvolution(s, t, gc::plan_run(t, s, gc::Device::kCpu)).run();
  ASSERT_EQ(each.size(), 4u);
  const std::vector<std::uint8_t> mask1 = gc::make_clean_mask(cube_.dirty[1], nullptr, 0.0);
  const gc::CleanResult one = gc::make_deconvolver(s.algorithm, gc::Device::kCpu)
                                  ->run(gc::CleanProblem{cube_.dirty[1], cube_.psf[1], mask1}, s, {});
  EXPECT_EQ(each[1].images.residual.pixels, one.images.residual.pixels);
  EXPECT_EQ(each[1].stop.iterations, one.stop.iterations);
}

TEST(RunPlan, TheCpuIsAlwaysThere) {
  EXPECT_EQ(gc::resolve_device(gc::Device::kCpu), gc::Device::kCpu);
  std::string note;
  const gc::Device d = gc::resolve_device(gc::Device::kAuto, &note);
  EXPECT_EQ(d == gc::Device::kGpu, gpuclean::cuda::built_with_cuda() && gpuclean::cuda::has_usable_device());
  EXPECT_NE(note.find(d == gc::Device::kGpu ? "GPU" : "CPU"), std::string::npos) << note;
  if (!gpuclean::cuda::has_usable_device()) EXPECT_ANY_THROW(gc::resolve_device(gc::Device::kGpu));
}

// On a GPU: a table far larger than its memory goes to the CPU for --device auto, with the
// sizes in the warning, and is refused for --device gpu; a small one fits with workers to spare.
class RunPlanGpu : public gpuclean::test::GpuTest {};

TEST_F(RunPlanGpu, TooLargeForTheGpuFallsBackOrIsRefused) {
  const gc::HostImage psf_image = gt::sidelobed_psf(64);
  const gc::PreparedPsf psf = gc::prepare_psf(psf_image, 64, 64, nullptr);
  const gc::HostImage dirty(64, 64);
  gc::WorkTable t = gc::one_plane_table(dirty, psf, nullptr, nullptr);
  gc::CleanSettings s;
  s.device = gc::Device::kAuto;
  const gc::RunPlan small = gc::plan_run(t, s, gc::Device::kGpu, {.parallel = 4});
  EXPECT_EQ(small.device, gc::Device::kGpu);
  EXPECT_EQ(small.workers, 1u);  // one group: one worker however many are allowed
  EXPECT_TRUE(small.fallback.empty());
  EXPECT_GT(small.gpu_bytes, 0u);

  t.width = t.height = 200000;  // 149 GiB per image: no GPU holds it (only the sizes are read)
  const gc::RunPlan auto_plan = gc::plan_run(t, s, gc::Device::kGpu);
  EXPECT_EQ(auto_plan.device, gc::Device::kCpu);
  EXPECT_NE(auto_plan.fallback.find("200000x200000"), std::string::npos) << auto_plan.fallback;
  EXPECT_NE(auto_plan.fallback.find("Running on the CPU instead"), std::string::npos);
  s.device = gc::Device::kGpu;
  EXPECT_THROW(gc::plan_run(t, s, gc::Device::kGpu), gc::InsufficientGpuMemory);
}

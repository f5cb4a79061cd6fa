// GPU joined-plane CLEAN against the CPU reference (MinorCycleCpu::run_joined, JoinedPlanesCpu)
// on a wideband analytic cube: the same components with the same plane fluxes, bit for bit,
// through the first major cycle (later, cuFFT and FFTW round the subtraction differently); the
// same stop reason; every plane's residual RMS and model flux within 0.1%.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/image_stats.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/joined_sky.hpp"
#include "tests/support/synthetic_cube.hpp"

namespace gc = gpuclean::clean;
using gpuclean::test::random_sky;
using gpuclean::test::SpectralSource;
using gpuclean::test::SyntheticCube;

namespace {

gc::CleanResult run_on(const gc::JoinedPlanes& planes, const gc::CleanSettings& s, gc::Device device) {
  return gpuclean::test::run_joined(planes, s, device);
}

// `gpu_out` (when given) receives the GPU run.
void expect_agree(const gc::JoinedPlanes& planes, gc::CleanSettings s, gc::CleanResult* gpu_out = nullptr) {
  const gc::JoinedProblemImages img = gc::joined_problem_images(planes);
  const auto mask = gc::make_clean_mask(img.dirty, nullptr, 0.0);
  const gc::PixelGaussian beam = gc::fit_psf_beam(img.psf);
  gc::CleanProblem problem{img.dirty, img.psf, mask, &beam};
  problem.joined = &planes;
  std::size_t first_cpu = 0, first_gpu = 0;
  s.device = gc::Device::kCpu;
  const gc::CleanResult cpu = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kCpu)
                                  ->run(problem, s, [&](const gc::CycleReport& r) { if (r.cycle == 1) first_cpu = r.iterations; });
  s.device = gc::Device::kGpu;
  const gc::CleanResult gpu = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kGpu)
                                  ->run(problem, s, [&](const gc::CycleReport& r) { if (r.cycle == 1) first_gpu = r.iterations; });
  const std::size_t np = planes.planes.size();
  ASSERT_GE(cpu.stop.iterations, 200u);
  ASSERT_GT(first_cpu, 0u);
  EXPECT_EQ(first_gpu, first_cpu);
  ASSERT_EQ(gpu.components.plane_fluxes.size(), gpu.components.list.size() * np);
  for (std::size_t k = 0; k < std::min(first_cpu, gpu.components.list.size()); ++k) {
    ASSERT_EQ(gpu.components.list[k].x, cpu.components.list[k].x) << k;
    ASSERT_EQ(gpu.components.list[k].y, cpu.components.list[k].y) << k;
    ASSERT_EQ(gpu.components.list[k].scale, cpu.components.list[k].scale) << k;
    // The scale images are FFT convolutions (cuFFT and FFTW round differently), and a logarithmic
    // fit takes exp and log, which the CPU's libm and the GPU round differently.
    if (s.multiscale.enabled || planes.fit.logarithmic) {
      ASSERT_NEAR(gpu.components.list[k].flux, cpu.components.list[k].flux, 1e-4 * std::abs(cpu.components.list[k].flux)) << k;
      for (std::size_t p = 0; p < np; ++p)
        ASSERT_NEAR(gpu.components.plane_fluxes[k * np + p], cpu.components.plane_fluxes[k * np + p],
                    1e-4 * std::abs(cpu.components.plane_fluxes[k * np + p]) + 1e-9) << k;
      continue;
    }
    ASSERT_EQ(std::memcmp(&gpu.components.list[k].flux, &cpu.components.list[k].flux, 4), 0) << k;
    ASSERT_EQ(std::memcmp(&gpu.components.plane_fluxes[k * np], &cpu.components.plane_fluxes[k * np], 4 * np), 0) << k;
  }
  EXPECT_EQ(gpu.stop.reason, cpu.stop.reason);
  ASSERT_EQ(gpu.images.planes.size(), np);
  for (std::size_t p = 0; p < np; ++p) {
    const double rc = gc::rms(cpu.images.planes[p].residual.pixels), rg = gc::rms(gpu.images.planes[p].residual.pixels);
    const double fc = gc::total_flux(cpu.images.planes[p].model.pixels), fg = gc::total_flux(gpu.images.planes[p].model.pixels);
    EXPECT_NEAR(rg, rc, 1e-3 * rc) << "plane " << p;
    EXPECT_NEAR(fg, fc, 1e-3 * std::abs(fc)) << "plane " << p;
    const double pc = gc::rms(cpu.images.planes[p].restored.pixels), pg = gc::rms(gpu.images.planes[p].restored.pixels);
    EXPECT_NEAR(pg, pc, 1e-3 * pc) << "plane " << p;
  }
  std::printf("  joined %s, %zu planes: cpu %zu components / %zu cycles, gpu %zu / %zu; first cycle %zu; "
              "plane 0 rms %.6e / %.6e\n",
              std::string(gc::to_string(planes.join)).c_str(), np, cpu.stop.iterations, cpu.stop.major_cycles, gpu.stop.iterations,
              gpu.stop.major_cycles, first_cpu, gc::rms(cpu.images.planes[0].residual.pixels),
              gc::rms(gpu.images.planes[0].residual.pixels));
  if (gpu_out) *gpu_out = gpu;
}

}  // namespace

using JoinedGpuVsCpu = gpuclean::test::GpuTest;

TEST_F(JoinedGpuVsCpu, EightChannels) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, random_sky(256, 40, 3), 1e-3);
  gc::CleanSettings s;
  s.niter = 20000;
  expect_agree(cube.planes, s);
}

// niter cuts the first cycle, so the clusters' teams stop by the budget cutoff
// (budget_cutoff.cuh) and the merge keeps exactly the CPU's first 300 components.
TEST_F(JoinedGpuVsCpu, EightChannelsFirstCycleCutByNiter) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, random_sky(256, 40, 3), 1e-3);
  gc::CleanSettings s;
  s.niter = 300;
  gc::CleanResult gpu;
  expect_agree(cube.planes, s, &gpu);
  EXPECT_EQ(gpu.stop.major_cycles, 1u) << "the first cycle must be the one niter cuts";
  EXPECT_EQ(gpu.stop.iterations, 300u);
}

TEST_F(JoinedGpuVsCpu, EightChannelsFittedWithTwoTerms) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, random_sky(256, 40, 4), 1e-3);
  cube.planes.fit.terms = 2;
  gc::CleanSettings s;
  s.niter = 20000;
  s.mgain = 0.8;
  expect_agree(cube.planes, s);
}

TEST_F(JoinedGpuVsCpu, FourPolarizations) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 4, 0.4e9, random_sky(256, 30, 5), 1e-3);
  cube.planes.join = gc::Join::kPolarizations;
  gc::CleanSettings s;
  s.niter = 20000;
  expect_agree(cube.planes, s);
}

TEST_F(JoinedGpuVsCpu, EightChannelsWithAutoMaskAndLocalRms) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, random_sky(256, 40, 6), 1e-3);
  gc::CleanSettings s;
  s.niter = 20000;
  s.auto_mask = 6.0;
  s.auto_threshold = 1.0;
  s.local_rms.enabled = true;
  expect_agree(cube.planes, s);
}

TEST_F(JoinedGpuVsCpu, EightChannelsMultiscale) {
  SyntheticCube cube;
  std::vector<SpectralSource> sky = random_sky(256, 20, 7);
  for (std::size_t i = 0; i < 8; ++i) sky[i].sigma = 2.0 + static_cast<double>(i);  // Gaussians of 2 to 9 pixels
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, sky, 1e-3);
  gc::CleanSettings s;
  s.niter = 20000;
  s.multiscale.enabled = true;
  s.threads = 4;  // small FFTs: more CPU threads only cost the reference time
  expect_agree(cube.planes, s);
}

// Planes streamed through the device a block at a time give the resident run, bit for bit: the
// same components and plane fluxes, every plane's residual and model.
TEST_F(JoinedGpuVsCpu, StreamedPlanesAreTheResidentRun) {
  SyntheticCube cube;
  std::vector<SpectralSource> sky = random_sky(256, 30, 8);
  for (std::size_t i = 0; i < 4; ++i) sky[i].sigma = 3.0 + 2.0 * static_cast<double>(i);
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, sky, 1e-3);
  cube.planes.fit.terms = 2;
  for (const bool multiscale : {false, true}) {
    SCOPED_TRACE(multiscale ? "multiscale" : "clark");
    gc::CleanSettings s;
    s.niter = 5000;
    s.multiscale.enabled = multiscale;
    cube.planes.device_planes = 0;
    const gc::CleanResult resident = run_on(cube.planes, s, gc::Device::kGpu);
    cube.planes.device_planes = 3;  // blocks of 3, 3 and 2
    const gc::CleanResult streamed = run_on(cube.planes, s, gc::Device::kGpu);
    ASSERT_GT(resident.stop.iterations, 200u);
    ASSERT_EQ(streamed.stop.iterations, resident.stop.iterations);
    EXPECT_EQ(streamed.stop.major_cycles, resident.stop.major_cycles);
    EXPECT_EQ(streamed.stop.reason, resident.stop.reason);
    for (std::size_t k = 0; k < resident.components.list.size(); ++k) {
      ASSERT_EQ(streamed.components.list[k].x, resident.components.list[k].x) << k;
      ASSERT_EQ(streamed.components.list[k].y, resident.components.list[k].y) << k;
      ASSERT_EQ(streamed.components.list[k].scale, resident.components.list[k].scale) << k;
    }
    ASSERT_EQ(streamed.components.plane_fluxes, resident.components.plane_fluxes);
    ASSERT_EQ(streamed.images.planes.size(), 8u);
    for (std::size_t p = 0; p < 8; ++p) {
      EXPECT_EQ(streamed.images.planes[p].residual.pixels, resident.images.planes[p].residual.pixels) << "plane " << p;
      EXPECT_EQ(streamed.images.planes[p].model.pixels, resident.images.planes[p].model.pixels) << "plane " << p;
      EXPECT_EQ(streamed.images.planes[p].restored.pixels, resident.images.planes[p].restored.pixels) << "plane " << p;
    }
    EXPECT_EQ(streamed.images.residual.pixels, resident.images.residual.pixels);
  }
}

TEST_F(JoinedGpuVsCpu, EightChannelsFittedWithALogarithmicPolynomial) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, random_sky(256, 40, 9), 1e-3);
  cube.planes.fit = {2, true};
  gc::CleanSettings s;
  s.niter = 20000;
  s.mgain = 0.8;
  expect_agree(cube.planes, s);
}

// A crowded field (150 bright sources within a patch width of each other) makes one cluster of
// thousands of members, all on one team, with the CPU's records.
TEST_F(JoinedGpuVsCpu, CrowdedFieldInOneLargeCluster) {
  SyntheticCube cube;
  std::vector<SpectralSource> sky = random_sky(256, 20, 10);
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::size_t> pos(64, 192);
  std::uniform_real_distribution<double> flux(1.0, 5.0), alpha(-1.0, 0.5);
  for (int i = 0; i < 150; ++i) sky.push_back({pos(rng), pos(rng), flux(rng), alpha(rng)});
  gpuclean::test::make_cube(cube, 256, 8, 0.8e9, sky, 1e-3);
  gc::CleanSettings s;
  s.niter = 20000;
  gc::CleanResult gpu;
  expect_agree(cube.planes, s, &gpu);
  EXPECT_GT(gpu.diagnostics.minor_stats.widest_cluster, 4096u);
  std::printf("  widest cluster %zu members, longest chain %zu\n", gpu.diagnostics.minor_stats.widest_cluster,
              gpu.diagnostics.minor_stats.longest_chain);
}

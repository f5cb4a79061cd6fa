// The device-memory estimate (clean/gpu_memory.hpp) is a per-algorithm answer: every algorithm
// shares the run's part (images, selection, scales, spectra) and adds what its own steps hold,
// as the factory's table names it; joined planes add their planes, fewer when streamed; the
// scales it counts are the run's, --multiscale-beam included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "clean/beam.hpp"
#include "clean/clean_mask.hpp"
#include "clean/gpu/algorithm_memory.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/scale_set.hpp"
#include "data/simulate.hpp"
#include "tests/support/gpu_test.hpp"

namespace gc = gpuclean::clean;

namespace {

using GpuMemory = gpuclean::test::GpuTest;

gc::CleanSettings settings_for(gc::Algorithm algorithm) {
  gc::CleanSettings s;
  s.algorithm = algorithm;
  s.niter = 10000;
  return s;
}

const gc::RunShape kShape{.width = 1024, .height = 1024, .psf_width = 1024, .psf_height = 1024};

std::vector<double> sizes_of(const std::vector<gc::CleanScale>& scales) {
  std::vector<double> out;
  for (const gc::CleanScale& sc : scales) out.push_back(sc.size);
  return out;
}

}  // namespace

TEST_F(GpuMemory, EachAlgorithmAddsItsOwnPartToTheRunsShare) {
  const gc::CleanSettings clark = settings_for(gc::Algorithm::kClark), hogbom = settings_for(gc::Algorithm::kHogbom);
  const std::vector<gc::CleanScale> scales = gc::plan_scales(clark, 1.0, 1024, 1024, 1024);
  const std::size_t own = gc::gpu::clark_gpu_bytes(kShape, clark, scales);
  EXPECT_GT(own, 0u);
  EXPECT_EQ(gc::gpu::hogbom_gpu_bytes(kShape, hogbom, scales), 0u);
  EXPECT_EQ(gc::gpu_bytes_needed(kShape, clark) - gc::gpu_bytes_needed(kShape, hogbom), own);
  EXPECT_EQ(gc::gpu::gpu_bytes_of(gc::Algorithm::kClark), &gc::gpu::clark_gpu_bytes);
  EXPECT_EQ(gc::gpu::gpu_bytes_of(gc::Algorithm::kHogbom), &gc::gpu::hogbom_gpu_bytes);
  // A worker of a batch keeps its caches' spectra and plans on top.
  EXPECT_GT(gc::gpu_bytes_per_worker(kShape, clark), gc::gpu_bytes_needed(kShape, clark));
}

TEST_F(GpuMemory, JoinedPlanesAddTheirPlanesFewerWhenStreamed) {
  const gc::CleanSettings s = settings_for(gc::Algorithm::kClark);
  gc::RunShape joined = kShape;
  joined.planes = 8;
  const std::size_t one = gc::gpu_bytes_needed(kShape, s), all = gc::gpu_bytes_needed(joined, s);
  EXPECT_GT(all, one + 8 * 3 * 1024 * 1024 * sizeof(float));  // at least each plane's three images
  joined.device_planes = 2;
  const std::size_t streamed = gc::gpu_bytes_needed(joined, s);
  EXPECT_LT(streamed, all);
  EXPECT_GT(streamed, one);
}

// --multiscale-beam below the restoring beam's FWHM measures the automatic scales in the smaller
// beam: a quarter of it adds two scales (the doubling starts two octaves lower and stops at the
// same size). The estimate must count the scales the run plans (clark_gpu.cpp: plan_scales()
// with scale_beam_pixels(problem, settings)), not those of the restoring beam. No GPU needed.
TEST(GpuMemoryScales, EstimateCountsTheScalesOfTheMultiscaleBeam) {
  gc::CleanSettings s = settings_for(gc::Algorithm::kClark);
  s.multiscale.enabled = true;
  const gc::PixelGaussian beam{12.0, 0.0, 10.0};  // an 8.2-pixel FWHM
  gc::RunShape shape = kShape;
  shape.beam = beam;
  const gc::HostImage dirty(1024, 1024);
  const gc::PreparedPsf psf{gc::HostImage(1024, 1024), 512, 512, 1.0f};
  const std::vector<std::uint8_t> mask(dirty.size(), 1);
  const gc::CleanProblem problem{dirty, psf, mask, &beam};
  const auto run_plan = [&](const gc::CleanSettings& settings) {
    return sizes_of(gc::plan_scales(settings, gc::scale_beam_pixels(problem, settings), 1024, 1024, 1024));
  };

  const std::vector<double> restoring = sizes_of(gc::gpu::estimated_scales(shape, s));
  EXPECT_EQ(restoring, run_plan(s));
  s.multiscale.beam_pixels = beam.fwhm_major_pixels() / 4.0;
  const std::vector<double> narrow = sizes_of(gc::gpu::estimated_scales(shape, s));
  EXPECT_EQ(narrow, run_plan(s));
  EXPECT_EQ(narrow.size(), restoring.size() + 2) << "a quarter of the beam adds two octaves of scales";
  EXPECT_EQ(narrow.back(), restoring.back());
}

// The same on the device: the run's scales are among the estimate's, which with the extra scales
// needs more than without them and bounds the run's measured peak.
TEST_F(GpuMemory, MultiscaleBeamBelowTheFitRaisesTheEstimateAndBoundsTheRun) {
  gpuclean::data::SimulationSettings sim;
  sim.size = 512;
  sim.sources = 40;
  const auto out = gpuclean::data::simulate(sim);
  gc::HostImage dirty(512, 512), psf_image(512, 512);
  dirty.pixels = out.dirty;
  psf_image.pixels = out.psf;
  const gc::PreparedPsf psf = gc::prepare_psf(psf_image, 512, 512, nullptr);
  const std::vector<std::uint8_t> mask = gc::make_clean_mask(dirty, nullptr, 0.0);
  const gc::PixelGaussian beam = gc::fit_psf_beam(psf);
  const gc::CleanProblem problem{dirty, psf, mask, &beam};
  const gc::RunShape shape{.width = 512, .height = 512, .psf_width = 512, .psf_height = 512, .beam = beam};

  gc::CleanSettings s = settings_for(gc::Algorithm::kClark);
  s.device = gc::Device::kGpu;
  s.niter = 300;
  s.multiscale.enabled = true;
  const std::size_t at_restoring = gc::gpu_bytes_needed(shape, s);
  const std::size_t restoring_scales = gc::gpu::estimated_scales(shape, s).size();
  s.multiscale.beam_pixels = beam.fwhm_major_pixels() / 4.0;
  const std::size_t at_narrow = gc::gpu_bytes_needed(shape, s);
  const std::vector<double> estimated = sizes_of(gc::gpu::estimated_scales(shape, s));
  EXPECT_GT(at_narrow, at_restoring) << "the narrow beam's extra scales need their images";

  const gc::CleanResult r = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kGpu)->run(problem, s, nullptr);
  ASSERT_GT(r.components.scales.size(), restoring_scales) << "the run must clean with more scales than the restoring beam gives";
  for (const gc::ScaleSummary& sc : r.components.scales)
    EXPECT_NE(std::find(estimated.begin(), estimated.end(), sc.size), estimated.end()) << "scale " << sc.size;
  EXPECT_GT(r.diagnostics.peak_gpu_bytes, 0u);
  EXPECT_LE(r.diagnostics.peak_gpu_bytes, at_narrow);
}

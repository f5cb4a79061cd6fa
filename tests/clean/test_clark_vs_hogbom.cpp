// Clark and Högbom must agree on a realistic field: a simulated MeerKAT observation.
#include <gtest/gtest.h>

#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/image_stats.hpp"
#include "data/simulate.hpp"

namespace gc = gpuclean::clean;

TEST(ClarkVsHogbom, AgreeOnASimulatedField) {
  gpuclean::data::SimulationSettings sim_settings;
  sim_settings.size = 256;
  sim_settings.sources = 30;
  sim_settings.seed = 7;
  sim_settings.noise = 1e-4;
  const auto sim = gpuclean::data::simulate(sim_settings);
  gc::HostImage dirty(256, 256), psf_img(256, 256);
  dirty.pixels = sim.dirty;
  psf_img.pixels = sim.psf;
  const auto psf = gc::prepare_psf(psf_img, 256, 256, nullptr);
  const auto mask = gc::make_clean_mask(dirty, nullptr, 0.0);

  gc::CleanSettings s;
  s.auto_threshold = 3.0;
  s.threads = 2;
  s.algorithm = gc::Algorithm::kClark;
  const auto clark = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kCpu)->run({dirty, psf, mask}, s, nullptr);
  s.algorithm = gc::Algorithm::kHogbom;
  const auto hogbom = gc::make_deconvolver(gc::Algorithm::kHogbom, gc::Device::kCpu)->run({dirty, psf, mask}, s, nullptr);

  const double flux_c = gc::total_flux(clark.images.model.pixels), flux_h = gc::total_flux(hogbom.images.model.pixels);
  const double rms_c = gc::rms(clark.images.residual.pixels), rms_h = gc::rms(hogbom.images.residual.pixels);
  // Stated tolerance: 1% in model flux, 3% in residual RMS (the algorithms differ in which noise
  // peaks they pick up close to the threshold).
  EXPECT_NEAR(flux_c, flux_h, 0.01 * flux_h);
  EXPECT_NEAR(rms_c, rms_h, 0.03 * rms_h);
  EXPECT_EQ(clark.stop.reason, gc::StopReason::kThreshold);
  EXPECT_EQ(hogbom.stop.reason, gc::StopReason::kThreshold);
  // Both must have found most of the true flux: the sky is known.
  double truth = 0.0;
  for (float v : sim.truth) truth += v;
  EXPECT_GT(flux_c, 0.85 * truth);
  EXPECT_LT(flux_c, 1.05 * truth);
  // And cleaned down to a residual near the noise.
  EXPECT_LT(rms_c, 2.0 * sim_settings.noise);
}

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "data/arrays.hpp"
#include "data/simulate.hpp"
#include "data/uv_coverage.hpp"

namespace gd = gpuclean::data;

namespace {
gd::SimulationSettings small(const std::string& array) {
  gd::SimulationSettings s;
  s.size = 128;
  s.array = array;
  s.noise = 0.0;
  return s;
}
}  // namespace

class Simulator : public ::testing::TestWithParam<std::string> {};

TEST_P(Simulator, PsfPeakIsOneAtTheCentre) {
  const auto sim = gd::simulate_sky(small(GetParam()), {});
  const std::size_t n = sim.size, c = n / 2;
  EXPECT_FLOAT_EQ(sim.psf[c * n + c], 1.0f);
  EXPECT_EQ(*std::max_element(sim.psf.begin(), sim.psf.end()), sim.psf[c * n + c]);
  // Whatever the weighting, the PSF is real and point-symmetric about its peak.
  for (std::size_t dy = 1; dy < 20; dy += 3)
    for (std::size_t dx = 1; dx < 20; dx += 5)
      EXPECT_NEAR(sim.psf[(c + dy) * n + c + dx], sim.psf[(c - dy) * n + c - dx], 1e-5);
  // 3 to 5 pixels across the beam, as the pixel scale was chosen.
  EXPECT_GT(sim.beam_fwhm_px, 3.0);
  EXPECT_LT(sim.beam_fwhm_px, 5.0);
}

TEST_P(Simulator, PointSourceDirtyImageIsTheShiftedScaledPsf) {
  gd::SkySource src;
  src.x = 40;
  src.y = 75;
  src.flux = 2.5;
  const auto sim = gd::simulate_sky(small(GetParam()), {src});
  const long n = static_cast<long>(sim.size), c = n / 2;
  double worst = 0.0;
  for (long y = 0; y < n; ++y)
    for (long x = 0; x < n; ++x) {
      const long px = x - 40 + c, py = y - 75 + c;
      if (px < 0 || py < 0 || px >= n || py >= n) continue;
      const double want = 2.5 * sim.psf[static_cast<std::size_t>(py * n + px)];
      worst = std::max(worst, std::abs(sim.dirty[static_cast<std::size_t>(y * n + x)] - want));
    }
  EXPECT_LT(worst, 2.5 * 1e-5);
  EXPECT_NEAR(sim.dirty[75 * sim.size + 40], 2.5f, 2.5e-5f);
}

INSTANTIATE_TEST_SUITE_P(Arrays, Simulator, ::testing::Values("meerkat", "vla-a"),
                         [](const auto& p) { return p.param == "vla-a" ? std::string("vla_a") : p.param; });

TEST(Simulator, NoiseHasTheRequestedRms) {
  auto s = small("meerkat");
  s.noise = 2e-4;
  const auto sim = gd::simulate_sky(s, {});
  double sum = 0.0;
  for (float v : sim.dirty) sum += static_cast<double>(v) * v;
  EXPECT_NEAR(std::sqrt(sum / static_cast<double>(sim.dirty.size())), 2e-4, 1e-6);
}

TEST(Simulator, SeedMakesTheSameSky) {
  gd::SimulationSettings s;
  s.size = 64;
  s.seed = 99;
  const auto a = gd::simulate(s), b = gd::simulate(s);
  EXPECT_EQ(a.dirty, b.dirty);
  s.seed = 100;
  EXPECT_NE(gd::simulate(s).dirty, a.dirty);
}

// --gaussian-size: every Gaussian's major FWHM lies in the range, in beams of pixels_per_beam.
TEST(Simulator, GaussianSizesFollowTheRange) {
  gd::SimulationSettings s;
  s.size = 128;
  s.sources = 0;
  s.gaussians = 20;
  s.gaussian_min_beams = 6.0;
  s.gaussian_max_beams = 9.0;
  const auto sim = gd::simulate(s);
  ASSERT_EQ(sim.sources.size(), 20u);
  for (const auto& g : sim.sources) {
    EXPECT_GE(g.fwhm_major_px, 6.0 * s.pixels_per_beam);
    EXPECT_LE(g.fwhm_major_px, 9.0 * s.pixels_per_beam);
  }
  s.gaussian_min_beams = 10.0;
  EXPECT_THROW(gd::validate(s), std::invalid_argument);
}

// --gaussian-flux: every Gaussian's integrated flux lies in the range; the rest of the sky (the
// generator's sequence) is the same as without it.
TEST(Simulator, GaussianFluxesFollowTheRange) {
  gd::SimulationSettings s;
  s.size = 128;
  s.sources = 10;
  s.gaussians = 20;
  const auto plain = gd::simulate(s);
  s.gaussian_min_flux = 0.2;
  s.gaussian_max_flux = 0.6;
  const auto sim = gd::simulate(s);
  ASSERT_EQ(sim.sources.size(), plain.sources.size());
  for (std::size_t i = 0; i < sim.sources.size(); ++i) {
    const auto& g = sim.sources[i];
    EXPECT_EQ(g.x, plain.sources[i].x);
    if (g.kind != gd::SkySource::Kind::kGaussian) {
      EXPECT_EQ(g.flux, plain.sources[i].flux);
      continue;
    }
    EXPECT_EQ(g.fwhm_major_px, plain.sources[i].fwhm_major_px);
    EXPECT_GE(g.flux, 0.2);
    EXPECT_LE(g.flux, 0.6);
  }
  s.gaussian_min_flux = 0.7;
  EXPECT_THROW(gd::validate(s), std::invalid_argument);
  s.gaussian_min_flux = 0.0;
  EXPECT_THROW(gd::validate(s), std::invalid_argument);
}

TEST(Arrays, PublishedLayouts) {
  EXPECT_EQ(gd::array_layout("meerkat").x.size(), 64u);
  EXPECT_EQ(gd::array_layout("vla-a").x.size(), 27u);
  EXPECT_THROW(gd::array_layout("alma"), std::invalid_argument);
  // VLA A: the longest baseline is about 36 km.
  const auto vla = gd::array_layout("vla-a");
  double longest = 0.0;
  for (std::size_t a = 0; a < vla.x.size(); ++a)
    for (std::size_t b = 0; b < vla.x.size(); ++b)
      longest = std::max(longest, std::hypot(vla.x[a] - vla.x[b], vla.y[a] - vla.y[b], vla.z[a] - vla.z[b]));
  EXPECT_NEAR(longest, 36.4e3, 1.5e3);
}

TEST(UvTracks, EarthRotationKeepsBaselineLengthsInThePlaneOfThePole) {
  // For a source at the pole, |(u, v)| is constant along each track (the track is a circle).
  const auto array = gd::array_layout("meerkat");
  gd::TrackSettings t;
  t.dec_deg = -90.0;
  t.min_elevation_deg = 0.0;
  t.ha_start_hours = -1;
  t.ha_end_hours = 1;
  t.step_seconds = 1800;
  const auto uv = gd::uv_tracks(array, t);
  const std::size_t per_step = 64 * 63 / 2;
  ASSERT_EQ(uv.size() % per_step, 0u);
  for (std::size_t b = 0; b < per_step; b += 97)
    EXPECT_NEAR(std::hypot(uv[b].u, uv[b].v), std::hypot(uv[b + per_step].u, uv[b + per_step].v), 1e-6);
}

// Joined-channel and joined-polarization CLEAN on the CPU (plane_set.hpp) against analytic
// truth: a cube of identical planes is the single-plane run; a wideband cube's per-channel
// fluxes and spectral indices, and --fit-spectral-pol's terms, are those of the simulated sky.
#include <gtest/gtest.h>

#include <cmath>

#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/errors.hpp"
#include "clean/log_polynomial_fit.hpp"
#include "clean/spectral_fit.hpp"
#include "tests/support/synthetic_cube.hpp"

namespace gc = gpuclean::clean;
using gpuclean::test::SpectralSource;
using gpuclean::test::SyntheticCube;

namespace {

gc::CleanSettings deep_settings() {
  gc::CleanSettings s;
  s.device = gc::Device::kCpu;
  s.auto_threshold = 0.0;
  s.threshold = 1e-3;
  s.niter = 20000;
  s.mgain = 0.8;
  s.threads = 2;
  return s;
}

gc::CleanResult run_joined(const SyntheticCube& cube, const gc::CleanSettings& s) {
  const gc::JoinedProblemImages img = gc::joined_problem_images(cube.planes);
  const auto mask = gc::make_clean_mask(img.dirty, nullptr, 0.0);
  gc::CleanProblem problem{img.dirty, img.psf, mask};
  problem.joined = &cube.planes;
  return gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kCpu)->run(problem, s, {});
}

const std::vector<SpectralSource> kSky = {
    {40, 40, 2.0, -0.7}, {90, 50, 1.0, 0.0}, {60, 95, 1.5, 0.8}, {100, 100, 0.6, -1.5}};

}  // namespace

TEST(JoinedPlanes, TwoIdenticalPlanesAreTheSinglePlaneRun) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 96, 1, 1e8, {{30, 30, 1.0, 0.0}, {60, 50, 0.5, 0.0}}, 1e-3);
  gc::JoinedPlanes two;
  two.join = gc::Join::kChannels;
  two.planes = {{&cube.dirty[0], &cube.psf[0], 1.4e9, 1.0}, {&cube.dirty[0], &cube.psf[0], 1.4e9, 1.0}};
  const auto mask = gc::make_clean_mask(cube.dirty[0], nullptr, 0.0);
  const gc::CleanSettings s = deep_settings();
  const gc::CleanProblem single{cube.dirty[0], cube.psf[0], mask};
  const gc::CleanResult one = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kCpu)->run(single, s, {});

  const gc::JoinedProblemImages img = gc::joined_problem_images(two);
  ASSERT_EQ(img.dirty.pixels, cube.dirty[0].pixels);  // 0.5 v + 0.5 v = v exactly
  gc::CleanProblem joined{img.dirty, img.psf, mask};
  joined.joined = &two;
  const gc::CleanResult j = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kCpu)->run(joined, s, {});
  ASSERT_GT(one.stop.iterations, 100u);
  ASSERT_EQ(j.stop.iterations, one.stop.iterations);
  EXPECT_EQ(j.stop.reason, one.stop.reason);
  ASSERT_EQ(j.components.plane_fluxes.size(), 2 * j.components.list.size());
  for (std::size_t k = 0; k < j.components.list.size(); ++k) {
    ASSERT_EQ(j.components.list[k].x, one.components.list[k].x) << k;
    ASSERT_EQ(j.components.list[k].y, one.components.list[k].y) << k;
    ASSERT_EQ(j.components.list[k].flux, one.components.list[k].flux) << k;
    ASSERT_EQ(j.components.plane_fluxes[2 * k], one.components.list[k].flux) << k;
    ASSERT_EQ(j.components.plane_fluxes[2 * k + 1], one.components.list[k].flux) << k;
  }
  ASSERT_EQ(j.images.planes.size(), 2u);
  for (const auto& p : j.images.planes) {
    EXPECT_EQ(p.residual.pixels, one.images.residual.pixels);
    // The model sums a cycle's components per pixel first (as the GPU does): the last bit may differ.
    for (std::size_t i = 0; i < p.model.size(); ++i)
      ASSERT_NEAR(p.model.pixels[i], one.images.model.pixels[i], 1e-6 * std::abs(one.images.model.pixels[i]) + 1e-12) << i;
  }
}

TEST(JoinedPlanes, RecoversEachChannelsFluxAndTheSpectralIndex) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 128, 8, 0.8e9, kSky, 2e-4);
  const gc::CleanResult r = run_joined(cube, deep_settings());
  ASSERT_EQ(r.images.planes.size(), 8u);
  EXPECT_EQ(r.stop.reason, gc::StopReason::kThreshold);
  for (const SpectralSource& src : kSky) {
    const std::vector<double> got = gpuclean::test::plane_flux_near(r, 8, src.x, src.y);
    for (std::size_t c = 0; c < 8; ++c)
      EXPECT_NEAR(got[c], cube.flux(src, c), 0.02 * cube.flux(src, c)) << "source at " << src.x << "," << src.y << " channel " << c;
    EXPECT_NEAR(gpuclean::test::fitted_alpha(got, cube.freqs), src.alpha, 0.1) << "source at " << src.x << "," << src.y;
  }
  // The integrated model holds the channels' weighted mean: its flux is that of the sky's mean.
  double expected = 0.0, weights = 0.0;
  for (std::size_t c = 0; c < 8; ++c) {
    for (const auto& s : kSky) expected += cube.planes.planes[c].weight * cube.flux(s, c);
    weights += cube.planes.planes[c].weight;
  }
  double model = 0.0;
  for (float v : r.images.model.pixels) model += v;
  EXPECT_NEAR(model, expected / weights, 0.01 * expected / weights);
}

TEST(JoinedPlanes, FitSpectralPolTermsMatchTheTruth) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 128, 8, 0.8e9, kSky, 2e-4);
  cube.planes.fit.terms = 2;
  const gc::CleanResult r = run_joined(cube, deep_settings());
  ASSERT_EQ(r.components.spectral_terms.size(), 2 * r.components.list.size());
  EXPECT_DOUBLE_EQ(r.components.reference_frequency_hz, 1.4e9);
  for (const SpectralSource& src : kSky) {
    double a0 = 0, a1 = 0;
    for (std::size_t k = 0; k < r.components.list.size(); ++k) {
      const double dx = double(r.components.list[k].x) - double(src.x), dy = double(r.components.list[k].y) - double(src.y);
      if (dx * dx + dy * dy > 6.25) continue;
      a0 += r.components.spectral_terms[2 * k];
      a1 += r.components.spectral_terms[2 * k + 1];
    }
    // The truth's own weighted straight line in (nu / nu0 - 1), in double.
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t c = 0; c < 8; ++c) {
      const double w = cube.planes.planes[c].weight, x = cube.freqs[c] / cube.ref_hz - 1.0, y = cube.flux(src, c);
      sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    const double t1 = (sw * sxy - sx * sy) / (sw * sxx - sx * sx), t0 = (sy - t1 * sx) / sw;
    EXPECT_NEAR(a0, t0, 0.02 * src.flux_ref) << src.x << "," << src.y;
    EXPECT_NEAR(a1, t1, 0.02 * src.flux_ref) << src.x << "," << src.y;
    // And the spectral index the terms imply at nu0 (a1 / a0) is the source's to 0.1.
    EXPECT_NEAR(a1 / a0, src.alpha, 0.1) << src.x << "," << src.y;
  }
  // Fitted channels lie on the polynomial: every component's plane fluxes are its terms' values.
  const gc::SpectralFit fit(cube.freqs, std::vector<double>(8, 1.0), 2, 1.4e9);
  for (std::size_t k = 0; k < std::min<std::size_t>(r.components.list.size(), 50); ++k)
    for (std::size_t c = 0; c < 8; ++c)
      EXPECT_NEAR(r.components.plane_fluxes[k * 8 + c], fit.evaluate(&r.components.spectral_terms[2 * k], cube.freqs[c]), 1e-5) << k;
}

TEST(JoinedPlanes, PolarizationsShareComponentsWithTheirOwnFluxes) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 96, 1, 1e8, {{30, 40, 1.0, 0.0}, {70, 60, 0.8, 0.0}}, 1e-4);
  // Q = 0.3 I, U = -0.2 I, V = 0 + noise: each a scaled copy of I's dirty image.
  std::vector<gc::HostImage> pols(4, cube.dirty[0]);
  const float scale[4] = {1.0f, 0.3f, -0.2f, 0.0f};
  for (std::size_t p = 1; p < 4; ++p)
    for (float& v : pols[p].pixels) v *= scale[p];
  gc::JoinedPlanes planes;
  planes.join = gc::Join::kPolarizations;
  for (std::size_t p = 0; p < 4; ++p) planes.planes.push_back({&pols[p], &cube.psf[0], 1.4e9, 1.0});
  const gc::JoinedProblemImages img = gc::joined_problem_images(planes);
  const auto mask = gc::make_clean_mask(img.dirty, nullptr, 0.0);
  gc::CleanProblem problem{img.dirty, img.psf, mask};
  problem.joined = &planes;
  gc::CleanSettings s = deep_settings();
  const gc::CleanResult r = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kCpu)->run(problem, s, {});
  const std::vector<double> got = gpuclean::test::plane_flux_near(r, 4, 30, 40);
  EXPECT_NEAR(got[0], 1.0, 0.02);
  EXPECT_NEAR(got[1], 0.3, 0.02);
  EXPECT_NEAR(got[2], -0.2, 0.02);
  EXPECT_NEAR(got[3], 0.0, 0.02);
  for (std::size_t k = 0; k < r.components.list.size(); ++k) EXPECT_EQ(r.components.list[k].flux, r.components.plane_fluxes[4 * k]);
}

TEST(SpectralFit, ProjectsOntoPolynomialsAndKeepsThem) {
  const std::vector<double> f = {1.0e9, 1.1e9, 1.25e9, 1.3e9, 1.5e9};
  const gc::SpectralFit fit(f, {1.0, 2.0, 1.0, 0.5, 1.0}, 3, 1.2e9);
  // A quadratic is its own fit, and its terms come back.
  const double truth[3] = {2.0, -0.5, 0.25};
  std::vector<float> v(5), fitted(5);
  for (std::size_t c = 0; c < 5; ++c) v[c] = static_cast<float>(fit.evaluate(truth, f[c]));
  fit.fit(v.data(), fitted.data());
  double terms[3];
  fit.fit_terms(v.data(), terms);
  for (std::size_t c = 0; c < 5; ++c) EXPECT_NEAR(fitted[c], v[c], 1e-5);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(terms[k], truth[k], 1e-4);
  // A straight-line fit of a parabola is not the parabola.
  const gc::SpectralFit line(f, std::vector<double>(5, 1.0), 2, 1.2e9);
  line.fit(v.data(), fitted.data());
  double off = 0;
  for (std::size_t c = 0; c < 5; ++c) off = std::max(off, std::abs(double(fitted[c]) - v[c]));
  EXPECT_GT(off, 1e-4);
  // More terms than channels (WSClean 3.1 accepts -fit-spectral-pol 4 over 2 joined channels): as
  // WSClean's fitters, as many terms as channels are fitted (the values themselves) and the others
  // stay 0.
  const gc::SpectralFit wide(f, std::vector<double>(5, 1.0), 6, 1.2e9);
  EXPECT_EQ(wide.terms(), 5u);
  wide.fit(v.data(), fitted.data());
  for (std::size_t c = 0; c < 5; ++c) EXPECT_NEAR(fitted[c], v[c], 1e-5);
  double six[6] = {0, 0, 0, 0, 0, 0};
  wide.fit_terms(v.data(), six);
  EXPECT_EQ(six[5], 0.0);
  EXPECT_THROW(gc::SpectralFit(f, std::vector<double>(5, 1.0), 0, 1.2e9), gc::InvalidSettings);
}

TEST(JoinedPlanes, AutoMaskAndLocalRmsRunOnTheIntegratedImage) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 128, 4, 0.4e9, kSky, 2e-3);
  gc::CleanSettings s = deep_settings();
  s.threshold = 0.0;
  s.auto_threshold = 1.0;
  s.auto_mask = 5.0;
  s.local_rms.enabled = true;
  const gc::CleanResult r = run_joined(cube, s);
  EXPECT_GT(r.diagnostics.auto_mask_cycle, 0u);
  EXPECT_TRUE(r.diagnostics.local_rms.used);
  for (const SpectralSource& src : kSky) {
    const std::vector<double> got = gpuclean::test::plane_flux_near(r, 4, src.x, src.y);
    for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(got[c], cube.flux(src, c), 0.03 * cube.flux(src, c)) << c;
  }
}

// A curved power law S = S0 (nu / nu0)^(alpha + beta log10(nu / nu0)) is its own logarithmic fit,
// whatever its sign; its terms are S0, alpha, beta.
TEST(SpectralFit, LogarithmicFitRecoversACurvedPowerLaw) {
  const std::vector<double> f = {0.9e9, 1.0e9, 1.1e9, 1.25e9, 1.4e9, 1.6e9, 1.7e9};
  const double ref = 1.3e9, s0 = 2.5, alpha = -0.8, beta = -0.3;
  for (const double sign : {1.0, -1.0}) {
    std::vector<float> v;
    for (double nu : f) {
      const double x = std::log10(nu / ref);
      v.push_back(static_cast<float>(sign * s0 * std::pow(10.0, alpha * x + beta * x * x)));
    }
    const gc::SpectralFit fit(f, {1.0, 2.0, 1.0, 1.0, 0.5, 1.0, 1.0}, 3, ref, true);
    std::vector<float> fitted(f.size());
    fit.fit(v.data(), fitted.data());
    double terms[3];
    fit.fit_terms(v.data(), terms);
    EXPECT_NEAR(terms[0], sign * s0, 1e-5);
    EXPECT_NEAR(terms[1], alpha, 1e-4);
    EXPECT_NEAR(terms[2], beta, 1e-3);
    for (std::size_t c = 0; c < f.size(); ++c) {
      EXPECT_NEAR(fitted[c], v[c], 1e-5 * std::abs(v[c]));
      EXPECT_NEAR(fit.evaluate(terms, f[c]), v[c], 1e-5 * std::abs(v[c]));
    }
  }
  // A faint source with noise, one channel pushed below zero: the fit stays finite and of the
  // mean's sign, its flux near the truth.
  const gc::SpectralFit line(f, std::vector<double>(f.size(), 1.0), 2, ref, true);
  std::vector<float> v;
  for (double nu : f) v.push_back(static_cast<float>(0.02 * std::pow(nu / ref, -0.7)));
  v[0] += 0.004f, v[3] -= 0.006f, v[6] -= 0.02f;
  ASSERT_LT(v[6], 0.0f);
  double terms[2];
  line.fit_terms(v.data(), terms);
  EXPECT_NEAR(terms[0], 0.02, 0.005);
  EXPECT_TRUE(std::isfinite(terms[1]));
  EXPECT_THROW(gc::SpectralFit(f, std::vector<double>(f.size(), 1.0), gc::kMaxLogTerms + 1, ref, true),
               gc::InvalidSettings);
}

// --fit-spectral-log-pol 2 on a wideband cube: each bright source's spectral index (the second
// term) within 0.1 of the truth and its flux at the reference frequency within 2%; every
// component's channel fluxes lie on its fitted power law.
TEST(JoinedPlanes, FitSpectralLogPolGivesEachSourcesSpectralIndex) {
  SyntheticCube cube;
  gpuclean::test::make_cube(cube, 128, 8, 0.8e9, kSky, 2e-4);
  cube.planes.fit = {2, true};
  const gc::CleanResult r = run_joined(cube, deep_settings());
  ASSERT_EQ(r.components.spectral_terms.size(), 2 * r.components.list.size());
  const gc::SpectralFit fit(cube.freqs, std::vector<double>(8, 1.0), 2, 1.4e9, true);
  for (const SpectralSource& src : kSky) {
    // The source's summed spectrum, fitted as the source list fits it.
    std::vector<float> spectrum(8, 0.0f);
    for (std::size_t k = 0; k < r.components.list.size(); ++k) {
      const double dx = double(r.components.list[k].x) - double(src.x), dy = double(r.components.list[k].y) - double(src.y);
      if (dx * dx + dy * dy > 6.25) continue;
      for (std::size_t c = 0; c < 8; ++c) spectrum[c] += r.components.plane_fluxes[k * 8 + c];
    }
    double terms[2];
    fit.fit_terms(spectrum.data(), terms);
    EXPECT_NEAR(terms[0], src.flux_ref, 0.02 * src.flux_ref) << src.x << "," << src.y;
    EXPECT_NEAR(terms[1], src.alpha, 0.1) << src.x << "," << src.y;
  }
  for (std::size_t k = 0; k < std::min<std::size_t>(r.components.list.size(), 60); ++k)
    for (std::size_t c = 0; c < 8; ++c)
      EXPECT_NEAR(r.components.plane_fluxes[k * 8 + c], fit.evaluate(&r.components.spectral_terms[2 * k], cube.freqs[c]),
                  1e-5 * std::abs(r.components.plane_fluxes[k * 8 + c]) + 1e-9) << k;
}

// The join and spectral-fit settings are CleanSettings', checked by clean::validate for every
// path that runs CLEAN (the single command, cubes, batch, Python).
TEST(JoinSettings, AreValidatedWithTheOtherSettings) {
  gc::CleanSettings s;
  s.fit_spectral_pol = 2;
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);  // a fit needs --join-channels
  s.join_channels = true;
  EXPECT_NO_THROW(gc::validate(s));
  EXPECT_EQ(s.join(), gc::Join::kChannels);
  EXPECT_EQ(s.spectral_fit().terms, 2u);
  EXPECT_FALSE(s.spectral_fit().logarithmic);
  s.fit_spectral_log_pol = 3;
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);  // two forms of one fit
  s.fit_spectral_pol = 0;
  EXPECT_TRUE(s.spectral_fit().logarithmic);
  s.fit_spectral_log_pol = gc::kMaxLogTerms + 1;
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);
  s.fit_spectral_log_pol = 0;
  s.join_polarizations = true;
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);  // not both joins
  s.join_channels = false;
  s.multiscale.enabled = true;
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);  // polarizations' scales are not their planes'
  s.multiscale.enabled = false;
  s.algorithm = gc::Algorithm::kHogbom;
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);  // joined planes are Clark's
}

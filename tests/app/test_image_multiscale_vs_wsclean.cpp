// `gpuclean image -niter N -multiscale -device cpu` (the binary) against Debian's WSClean 3.1 running its
// own Cotton-Schwab loop with the same options (plan §5, multiscale; issue 36): the final residual RMS
// and the model's total flux within 2 % of WSClean's, every truth point of at least 5σ recovered in
// both, and each truth Gaussian's recovered flux at least 95 % of WSClean's. Twice: as the issue
// states it (-auto-threshold 3), and with -auto-mask 5 as astronomers run multiscale (its second,
// masked phase is a major cycle of its own in both programs).
// The MS: data/simulate_ms.py --sky mixed --seed 3: 8 points (12 mJy..0.61 Jy) and 3 Gaussians of
// 0.28..0.50 Jy and 24..35" FWHM, 32 antennas, 1 h, 2 channels, noise 10 mJy; each program takes
// about 2-3 s on 2 cores. Both programs run once per configuration for its tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tests/app/image_vs_wsclean_support.hpp"

namespace gpuclean {
namespace {

using namespace test;

const char* const kOptions =
    "-use-wgridder -no-small-inversion -niter 10000 -mgain 0.8 -auto-threshold 3 -multiscale -weight briggs 0 "
    "-make-psf -j 2 -size 512 512 -scale 2asec";

struct Config {
  const char* name;
  const char* extra;  // options added to kOptions
};
void PrintTo(const Config& c, std::ostream* os) { *os << (*c.extra ? c.extra : "-auto-threshold 3 only"); }

struct Runs {
  TempDir dir;
  Outputs ours, theirs;
  std::vector<TruthRow> rows;
  std::vector<double> freqs;  // the MS's channel centres
};

std::unique_ptr<Runs> make_runs(const Config& c) {
  auto r = std::make_unique<Runs>();
  const std::string ms = simulate(r->dir, "a", "--sky mixed --seed 3 --antennas 32 --hours 1 --integration 300 "
                                              "--channels 2 --noise 0.01");
  run_both(r->dir, std::string(kOptions) + " " + c.extra, ms);
  r->ours = read_outputs(r->dir.file("g"));
  r->theirs = read_outputs(r->dir.file("w"));
  r->rows = read_truth(r->dir.file("a-truth.csv"));
  r->freqs = ms_channel_centres(r->theirs.image, 2);
  return r;
}

class ImageMultiscaleVsWsclean : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    static std::map<std::string, std::unique_ptr<Runs>> runs;  // one run of both programs per configuration
    std::unique_ptr<Runs>& r = runs[GetParam().name];
    if (!r) {
      try {
        r = make_runs(GetParam());
      } catch (const std::exception& e) {
        FAIL() << e.what();
      }
    }
    runs_ = r.get();
  }
  Runs* runs_ = nullptr;
};

// Measured 2026-11-26: -auto-threshold 3: RMS -1.5 %, flux +0.0 % (1623 components, WSClean 1585, both
// 4 major cycles); -auto-mask 5: -1.7 %, +0.5 % (879 and 829). Within 2 % only with the automatic
// scales and their bias measured in WSClean 3.1's theoretic beam (2.73 px: scales 0, 11, 22, 44, 87,
// 175 px biased 1, 1.7, 2.8, 4.6, 7.7, 12.9; MultiScaleAlgorithm(minTheoreticalBeamSize)), as
// app/image/clean_groups.cpp group_settings now sets it: in the fitted PSF's major axis (6.7 px:
// scales 0, 27, 54, 108 px) gpuclean took the Gaussians at large scales later, +4.4 % and -1.8 %.
TEST_P(ImageMultiscaleVsWsclean, ResidualRmsAndModelFluxWithin2Percent) {
  const double rms_ours = rms(runs_->ours.residual), rms_theirs = rms(runs_->theirs.residual);
  const double flux_ours = total(runs_->ours.model), flux_theirs = total(runs_->theirs.model);
  std::printf("residual RMS: gpuclean %.4f mJy, WSClean %.4f mJy (%+.2f %%)\n", 1e3 * rms_ours, 1e3 * rms_theirs,
              100 * (rms_ours / rms_theirs - 1));
  std::printf("model flux: gpuclean %.4f Jy, WSClean %.4f Jy (%+.2f %%)\n", flux_ours, flux_theirs,
              100 * (flux_ours / flux_theirs - 1));
  EXPECT_NEAR(rms_ours, rms_theirs, 0.02 * rms_theirs);
  EXPECT_NEAR(flux_ours, flux_theirs, 0.02 * flux_theirs);
}

// Points: the rule of test_image_clean_vs_wsclean (expect_point_recovered), σ = WSClean's final
// residual RMS. Gaussians: sums in a box of ±(1.5 FWHM + 1.5 BMAJ) about each. What CLEAN recovered
// is the model's sum there: gpuclean's must be at least 95 % of WSClean's (issue 36). The model's sum
// plus the residual's sum over the beam's area (WSClean's beam for both) must be the truth within
// 15 % in both, so that the box holds the source (the residual's noise and sidelobes add +4..+9 %,
// measured). Why not model + residual for the 95 %: it barely depends on the deconvolution; gpuclean
// without -multiscale (Clark) scores 103..110 % of WSClean's on it but 75..95 % on the model alone.
// Both programs must also have imaged the same dirty image, else nothing here compares like with like.
TEST_P(ImageMultiscaleVsWsclean, SourcesRecoveredInBothAndExtendedAtLeast95PercentOfWsclean) {
  const Runs& r = *runs_;
  const double dirty = max_difference(r.ours.dirty, r.theirs.dirty), psf = max_difference(r.ours.psf, r.theirs.psf);
  std::printf("max |gpuclean - WSClean|: dirty %.2e, PSF %.2e of the peak\n", dirty, psf);
  EXPECT_LT(dirty, 2e-3);  // measured 1.29e-3 and 1.10e-3 (PSF); a setting that differs gives > 0.05
  EXPECT_LT(psf, 2e-3);
  const double sigma = rms(r.theirs.residual);
  const double area = beam_area_pixels(r.theirs.image);
  const double pixel_arcsec = std::abs(*r.theirs.image.header.get_double("CDELT1")) * 3600;
  const double bmaj_arcsec = *r.theirs.image.header.get_double("BMAJ") * 3600;
  int points = 0, gaussians = 0;
  for (const TruthRow& row : r.rows) {
    const double flux = row.mean_flux(r.freqs);
    if (row.kind == "point") {
      if (flux < 5 * sigma) continue;
      ++points;
      const Source s{row.l_arcsec, row.m_arcsec, flux};
      expect_point_recovered(s, r.ours, sigma, "gpuclean");
      expect_point_recovered(s, r.theirs, sigma, "WSClean");
      continue;
    }
    ++gaussians;
    const int half = static_cast<int>(std::ceil((1.5 * row.fwhm_major_arcsec + 1.5 * bmaj_arcsec) / pixel_arcsec));
    double x, y;
    pixel_of(r.theirs.model, row.l_arcsec, row.m_arcsec, &x, &y);
    const double model_ours = box_sum(r.ours.model, x, y, half), model_theirs = box_sum(r.theirs.model, x, y, half);
    const double all_ours = model_ours + box_sum(r.ours.residual, x, y, half) / area;
    const double all_theirs = model_theirs + box_sum(r.theirs.residual, x, y, half) / area;
    std::printf("Gaussian at (%.0f, %.0f) px, %.0f\" FWHM, %.4f Jy: model gpuclean %.4f Jy, WSClean %.4f Jy (%.1f %%); "
                "model + residual gpuclean %.4f Jy, WSClean %.4f Jy\n",
                x, y, row.fwhm_major_arcsec, flux, model_ours, model_theirs, 100 * model_ours / model_theirs, all_ours,
                all_theirs);
    EXPECT_NEAR(all_ours, flux, 0.15 * flux) << "gpuclean, Gaussian at (" << x << ", " << y << ")";
    EXPECT_NEAR(all_theirs, flux, 0.15 * flux) << "WSClean, Gaussian at (" << x << ", " << y << ")";
    EXPECT_GE(model_ours, 0.95 * model_theirs) << "Gaussian at (" << x << ", " << y << ")";
  }
  EXPECT_EQ(points, 8);  // every point of this sky is above 5σ
  EXPECT_EQ(gaussians, 3);
}

INSTANTIATE_TEST_SUITE_P(Wsclean31, ImageMultiscaleVsWsclean,
                         ::testing::Values(Config{"auto_threshold", ""}, Config{"auto_mask", "-auto-mask 5"}),
                         [](const ::testing::TestParamInfo<Config>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace gpuclean

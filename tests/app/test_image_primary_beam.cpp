// `gpuclean image -apply-primary-beam` (issue 47) on simulated MSs whose sky was attenuated by a
// known beam (data/simulate_ms.py --primary-beam gaussian --dish-diameter 12 --beam-fwhm-factor
// 1.09 --telescope ASKAP: the Gaussian gpuclean corrects ASKAP with, docs/primary-beam.md): three
// points of 1, 1 and 0.5 Jy at 0″, 1500″ and 1082″ from the pointing (attenuated to 0.72 and
// 0.84 at 1.284 GHz), 4 channels, no noise. WSClean 3.1 in Debian has no EveryBeam, so the
// references are the truth and the beam formula evaluated here:
// - each source's peak in NAME-{0000,0001,MFS}-image-pb.fits is its flux within 2 %;
// - NAME-000c-beam-0.fits is exp(−4 ln 2 r² / FWHM²) (its voltage with EveryBeam's 1e-4 floor),
//   FWHM = 1.09 λ_c / 12 m at the channel's centre, r from the SIN projection, to 1e-6; beam-15
//   equals it and beam-9 is 0 (WSClean 3.7's Mueller terms for Stokes I); no MFS beam file;
// - -primary-beam-limit: NaN where the beam is at or below it;
// - an aperture array (LOFAR) and a -pol list WSClean cannot correct are refused before the read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "io/fits_reader.hpp"
#include "tests/io/ms_test_files.hpp"
#include "tests/support/run_command.hpp"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr double kArcsec = M_PI / (180.0 * 3600.0);
const std::string kImage = "image -device cpu -size 1024 1024 -scale 4asec ";

class ImagePrimaryBeam : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_ = std::make_unique<TempDir>();
    const std::string sky = shared_->file("sky.csv");
    std::ofstream(sky) << "kind,l_arcsec,m_arcsec,flux_jy\npoint,0,0,1.0\npoint,1500,0,1.0\npoint,-600,900,0.5\n";
    for (const char* telescope : {"ASKAP", "LOFAR"})
      test::run_python(*shared_, test::source_dir() + "/data/simulate_ms.py --out " + shared_->file(std::string(telescope) + ".ms") +
                                     " --sky-file " + sky + " --telescope " + telescope +
                                     " --primary-beam gaussian --dish-diameter 12 --beam-fwhm-factor 1.09"
                                     " --antennas 32 --hours 2 --integration 300 --channels 4 --noise 0 --correlations linear");
  }
  static void TearDownTestSuite() { shared_.reset(); }

  test::CommandResult gpuclean(const std::string& options, const std::string& telescope = "ASKAP") const {
    return test::run_gpuclean(dir_, kImage + options + " -name " + dir_.file("g") + " " + shared_->file(telescope + ".ms"));
  }
  io::FitsImage read(const std::string& suffix) const { return io::read_fits_image(dir_.file("g" + suffix)); }
  std::set<std::string> files() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_.path())) out.insert(e.path().filename().string());
    return out;
  }

  TempDir dir_;
  static std::unique_ptr<TempDir> shared_;
};
std::unique_ptr<TempDir> ImagePrimaryBeam::shared_;

/// The pixel (x, y) of a source at (l, m) arcsec: CRPIX 513 (N/2 + 1), RA increasing to the left.
double peak_near(const io::FitsImage& f, double l_arcsec, double m_arcsec) {
  const int x = 512 - static_cast<int>(std::lround(l_arcsec / 4)), y = 512 + static_cast<int>(std::lround(m_arcsec / 4));
  double best = -1e30;
  for (int j = y - 2; j <= y + 2; ++j)
    for (int i = x - 2; i <= x + 2; ++i) best = std::max(best, double(f.pixels[j * 1024 + i]));
  return best;
}

TEST_F(ImagePrimaryBeam, CorrectedImagesGiveTheSourcesFluxes) {
  const test::CommandResult r = gpuclean("-niter 2000 -mgain 0.8 -threshold 1e-4 -channels-out 2 -apply-primary-beam");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::set<std::string> f = files();
  for (const std::string c : {"-0000", "-0001"})
    for (const std::string k : {"-beam-0", "-beam-9", "-beam-15", "-image-pb", "-residual-pb", "-model-pb"})
      EXPECT_TRUE(f.count("g" + c + k + ".fits")) << c + k;
  for (const std::string k : {"-image-pb", "-residual-pb", "-model-pb"}) EXPECT_TRUE(f.count("g-MFS" + k + ".fits")) << k;
  EXPECT_FALSE(f.count("g-MFS-beam-0.fits"));
  EXPECT_FALSE(f.count("g-0000-beam-1.fits"));  // Stokes I: WSClean 3.7's terms 0, 9, 15
  struct Truth {
    double l, m, flux;
  };
  for (const std::string c : {"-0000", "-0001", "-MFS"}) {
    const io::FitsImage pb = read(c + "-image-pb.fits"), plain = read(c + "-image.fits");
    for (const Truth& t : {Truth{0, 0, 1.0}, Truth{1500, 0, 1.0}, Truth{-600, 900, 0.5}}) {
      const double corrected = peak_near(pb, t.l, t.m), attenuated = peak_near(plain, t.l, t.m);
      std::printf("%-6s source at (%5.0f, %4.0f)\": image %.4f Jy/beam, image-pb %.4f (truth %.2f)\n", c.c_str(), t.l,
                  t.m, attenuated, corrected, t.flux);
      EXPECT_NEAR(corrected, t.flux, 0.02 * t.flux) << c << " at " << t.l << ", " << t.m;
    }
  }
}

TEST_F(ImagePrimaryBeam, TheBeamImageIsTheModelAndTheLimitCutsIt) {
  const test::CommandResult r = gpuclean("-channels-out 2 -apply-primary-beam -primary-beam-limit 0.5");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string c : {"-0000", "-0001"}) {
    const io::FitsImage b0 = read(c + "-beam-0.fits"), b9 = read(c + "-beam-9.fits"), b15 = read(c + "-beam-15.fits");
    const io::FitsImage pb = read(c + "-image-pb.fits");
    const double freq = b0.header.get_double("CRVAL3").value();
    const double fwhm = 1.09 * (299792458.0 / freq) / 12.0;
    double worst = 0;
    std::size_t cut = 0, expected_cut = 0;
    for (int y = 0; y < 1024; y += 7)
      for (int x = 0; x < 1024; x += 7) {
        const double l = -(x - 512) * 4 * kArcsec, m = (y - 512) * 4 * kArcsec;  // SIN: direction cosines
        const double r2 = std::pow(std::asin(std::sqrt(l * l + m * m)), 2);
        // The power beam, with EveryBeam's floor on the voltage ((1 − 1e-4)·vp + 1e-4), kept for every model.
        const double vp = (1 - 1e-4) * std::exp(-2 * std::log(2.0) * r2 / (fwhm * fwhm)) + 1e-4;
        const double model = vp * vp;
        const std::size_t i = static_cast<std::size_t>(y) * 1024 + x;
        worst = std::max(worst, std::abs(b0.pixels[i] - model));
        EXPECT_EQ(b9.pixels[i], 0.0f);  // Re M30: off the diagonal, 0 for a dish's scalar beam
        EXPECT_EQ(b15.pixels[i], b0.pixels[i]);
        cut += std::isnan(pb.pixels[i]);
        expected_cut += model <= 0.5;
      }
    std::printf("%s: %.4g GHz, FWHM %.2f', max |beam-0 - model| %.2e, %zu of the sampled pixels cut at 0.5 (model: %zu)\n",
                c.c_str(), freq / 1e9, fwhm / kArcsec / 60, worst, cut, expected_cut);
    EXPECT_LT(worst, 1e-6);
    EXPECT_GT(cut, 0u);
    EXPECT_NEAR(double(cut), double(expected_cut), 2.0 + 0.001 * expected_cut);  // float rounding at the edge
  }
}

TEST_F(ImagePrimaryBeam, AperturArraysAndOtherPolarizationsAreRefusedBeforeTheRead) {
  struct Case {
    std::string options, telescope, says;
  };
  for (const Case& c : {Case{"-apply-primary-beam", "LOFAR", "EveryBeam"},
                        Case{"-apply-primary-beam -pol q", "ASKAP", "-apply-primary-beam corrects Stokes I"},
                        Case{"-apply-primary-beam -pol xx", "ASKAP", "-apply-primary-beam corrects Stokes I"}}) {
    SCOPED_TRACE(c.options + " on " + c.telescope);
    const test::CommandResult r = gpuclean(c.options, c.telescope);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");  // refused before anything was read or said
    for (const std::string& n : files()) EXPECT_NE(n.rfind("g-", 0), 0u) << n;
  }
}

TEST_F(ImagePrimaryBeam, EveryStokesParameterGetsItsPbImage) {
  const test::CommandResult r = gpuclean("-pol iquv -apply-primary-beam");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::set<std::string> f = files();
  for (const std::string pol : {"I", "Q", "U", "V"}) EXPECT_TRUE(f.count("g-" + pol + "-image-pb.fits")) << pol;
  for (int k = 0; k < 16; ++k) EXPECT_TRUE(f.count("g-beam-" + std::to_string(k) + ".fits")) << k;  // IQUV: all 16
  EXPECT_FALSE(f.count("g-I-beam-0.fits"));
}

}  // namespace
}  // namespace gpuclean

// fit_psf_beam_wsclean_box (WSClean 3.1's fit in one box) on PSFs with sidelobes near the main lobe,
// the shape that made it diverge (issue 36: BMAJ 23689° on a 32-antenna, 1-h MeerKAT PSF at 2″,
// where WSClean wrote 17.4″). The expected beams are WSClean 3.1's own fitter (schaapcommon
// gaussianfitter.cc of the 3.1 release, built against GSL 2.7) run on the same images: box 40,
// initial estimate 3.82 px (the theoretic beam at 2″), pixels of 2″ with RA to the left.
#include <gtest/gtest.h>

#include <cmath>

#include "clean/beam.hpp"
#include "clean/psf.hpp"

namespace gc = gpuclean::clean;

namespace {

struct Shape {
  double sx, sy, beta;             ///< main lobe exp(−x²/2sx² + β xy/sx sy − y²/2sy²), pixels
  double side, side_x, side_y;     ///< two sidelobes of this height at ±(side_x, side_y), σ 2 px
};

// 128², peak exactly 1 at (64, 64): a PSF's.
gc::PreparedPsf psf_of(const Shape& s) {
  constexpr std::size_t n = 128;
  gc::HostImage img(n, n);
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x) {
      const double dx = static_cast<double>(x) - 64, dy = static_cast<double>(y) - 64;
      const double u = dx / s.sx, w = dy / s.sy;
      double v = std::exp(-0.5 * u * u + s.beta * u * w - 0.5 * w * w);
      for (int sign : {-1, 1}) {
        const double ex = dx - sign * s.side_x, ey = dy - sign * s.side_y;
        v += s.side * std::exp(-(ex * ex + ey * ey) / 8);
      }
      img.at(x, y) = (x == 64 && y == 64) ? 1.0f : static_cast<float>(v);
    }
  return gc::prepare_psf(img, n, n, nullptr);
}

gc::SkyBeam fit(const Shape& s) {
  gc::PixelToSky t;
  t.m[0][0] = -2.0 / 3600.0;
  t.m[1][1] = 2.0 / 3600.0;
  return gc::to_sky(gc::fit_psf_beam_wsclean_box(psf_of(s), 40, 40, 3.82), t);
}

}  // namespace

// Fitted from a log-linear start in the quadratic form's (a, b, c), as before, this ran into the
// ellipse infinitely long towards dx < 0 < dy (which the quadrant never samples): 3.6e7 × 7.05 px.
TEST(BeamFitWscleanBox, SidelobesBesideAnElongatedLobeAsWsclean) {
  const gc::SkyBeam b = fit({2.1, 3.7, -0.1, 0.3, 8, 0.5});
  EXPECT_NEAR(b.bmaj_arcsec, 2 * 9.500271, 2e-5 * b.bmaj_arcsec);  // WSClean: 9.500271 × 5.624852 px
  EXPECT_NEAR(b.bmin_arcsec, 2 * 5.624852, 2e-5 * b.bmin_arcsec);
  EXPECT_NEAR(b.bpa_deg, 17.0393, 1e-3);
}

// Stronger sidelobes: WSClean's β ends at −1.15, beyond ±1 (the quadrant alone does not bound it),
// and its beam takes each axis from the magnitude of the covariance's eigenvalue.
TEST(BeamFitWscleanBox, CorrelationBeyondOneAsWsclean) {
  const gc::SkyBeam b = fit({2.1, 3.7, -0.1, 0.45, 8, 0});
  EXPECT_NEAR(b.bmaj_arcsec, 2 * 23.519875, 2e-5 * b.bmaj_arcsec);  // WSClean: 23.519875 × 6.207541 px
  EXPECT_NEAR(b.bmin_arcsec, 2 * 6.207541, 2e-5 * b.bmin_arcsec);
  EXPECT_NEAR(b.bpa_deg, 180 - 135.1421, 1e-3);  // its angle −135.1421°
}

// A plain Gaussian PSF, circular start far from it: the fit is the Gaussian.
TEST(BeamFitWscleanBox, RecoversAGaussian) {
  const gc::SkyBeam b = fit({2.1, 3.7, 0.4, 0, 0, 0});
  gc::PixelToSky t;
  t.m[0][0] = -2.0 / 3600.0;
  t.m[1][1] = 2.0 / 3600.0;
  const double f = 1 - 0.4 * 0.4;
  const gc::SkyBeam truth =
      gc::to_sky(gc::PixelGaussian{2.1 * 2.1 / f, 0.4 * 2.1 * 3.7 / f, 3.7 * 3.7 / f}, t);
  EXPECT_NEAR(b.bmaj_arcsec, truth.bmaj_arcsec, 1e-5 * truth.bmaj_arcsec);
  EXPECT_NEAR(b.bmin_arcsec, truth.bmin_arcsec, 1e-5 * truth.bmin_arcsec);
  EXPECT_NEAR(b.bpa_deg, truth.bpa_deg, 1e-4);
}

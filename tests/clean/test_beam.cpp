#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numbers>

#include "clean/beam.hpp"
#include "clean/errors.hpp"
#include "clean/psf.hpp"

namespace gc = gpuclean::clean;

namespace {

// An analytic elliptical Gaussian PSF given on the sky; pixels of `pixel_arcsec`, RA to the left.
gc::PreparedPsf analytic_psf(const gc::SkyBeam& b, double pixel_arcsec, std::size_t n = 128) {
  gc::PixelToSky t;
  t.m[0][0] = -pixel_arcsec / 3600.0;
  t.m[1][1] = pixel_arcsec / 3600.0;
  const gc::PixelGaussian g = gc::from_sky(b, t);
  gc::HostImage img(n, n);
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x)
      img.at(x, y) = static_cast<float>(g.value(static_cast<double>(x) - n / 2.0, static_cast<double>(y) - n / 2.0));
  return gc::prepare_psf(img, n, n, nullptr);
}

double angle_diff(double a, double b) {
  double d = std::fmod(std::abs(a - b), 180.0);
  return std::min(d, 180.0 - d);
}

}  // namespace

struct BeamCase {
  double bmaj, bmin, bpa, pixel;
};

class BeamFitAnalytic : public ::testing::TestWithParam<std::tuple<BeamCase, gc::BeamFit>> {};

TEST_P(BeamFitAnalytic, RecoversTheGaussian) {
  const auto [c, method] = GetParam();
  const gc::SkyBeam truth{c.bmaj, c.bmin, c.bpa};
  const gc::PreparedPsf psf = analytic_psf(truth, c.pixel);
  gc::PixelToSky t;
  t.m[0][0] = -c.pixel / 3600.0;
  t.m[1][1] = c.pixel / 3600.0;
  const gc::SkyBeam fit = gc::to_sky(gc::fit_psf_beam(psf, method), t);
  EXPECT_NEAR(fit.bmaj_arcsec, c.bmaj, 0.01 * c.bmaj);
  EXPECT_NEAR(fit.bmin_arcsec, c.bmin, 0.01 * c.bmin);
  if (c.bmaj / c.bmin > 1.05) {
    EXPECT_LT(angle_diff(fit.bpa_deg, c.bpa), 1.0) << fit.bpa_deg;
  }
  EXPECT_GE(fit.bpa_deg, 0.0);
  EXPECT_LT(fit.bpa_deg, 180.0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BeamFitAnalytic,
    ::testing::Combine(::testing::Values(BeamCase{7.44, 6.07, 158.8, 2.4}, BeamCase{12.0, 4.0, 30.0, 1.0},
                                         BeamCase{5.0, 5.0, 0.0, 1.25}, BeamCase{20.0, 10.0, 95.0, 4.0},
                                         BeamCase{9.0, 3.0, 0.0, 1.0}),
                       ::testing::Values(gc::BeamFit::kWsclean, gc::BeamFit::kCasa)));

TEST(Beam, SkyPixelRoundTrip) {
  gc::PixelToSky t;
  t.m[0][0] = -1.0 / 3600.0;
  t.m[0][1] = 0.2 / 3600.0;
  t.m[1][0] = 0.1 / 3600.0;
  t.m[1][1] = 1.5 / 3600.0;
  const gc::SkyBeam b{10.0, 4.0, 33.0};
  const gc::SkyBeam back = gc::to_sky(gc::from_sky(b, t), t);
  EXPECT_NEAR(back.bmaj_arcsec, 10.0, 1e-9);
  EXPECT_NEAR(back.bmin_arcsec, 4.0, 1e-9);
  EXPECT_NEAR(back.bpa_deg, 33.0, 1e-9);
}

TEST(Beam, PositionAngleCountsFromNorthThroughEast) {
  // A beam stretched along +y (north) has PA 0; along -x (east, RA increasing) PA 90.
  gc::PixelToSky t;
  t.m[0][0] = -1.0 / 3600.0;
  t.m[1][1] = 1.0 / 3600.0;
  EXPECT_NEAR(gc::to_sky(gc::PixelGaussian{1.0, 0.0, 4.0}, t).bpa_deg, 0.0, 1e-9);
  EXPECT_NEAR(gc::to_sky(gc::PixelGaussian{4.0, 0.0, 1.0}, t).bpa_deg, 90.0, 1e-9);
  // Major axis along (-x, +y), i.e. north-east: PA 45.
  EXPECT_NEAR(gc::to_sky(gc::PixelGaussian{2.5, -1.5, 2.5}, t).bpa_deg, 45.0, 1e-9);
}

TEST(Beam, KernelHasUnitPeakAtItsCentre) {
  const gc::PixelGaussian g{4.0, 1.0, 2.0};
  const gc::HostImage k = gc::gaussian_kernel(g, 1000, 1000);
  EXPECT_EQ(k.width % 2, 1u);
  EXPECT_FLOAT_EQ(k.at(k.width / 2, k.height / 2), 1.0f);
  EXPECT_LT(k.at(0, k.height / 2), 1e-5f);
}

TEST(Beam, TooSmallMainLobeIsAnInputError) {
  gc::HostImage img(16, 16, 0.0f);
  img.at(8, 8) = 1.0f;
  const auto psf = gc::prepare_psf(img, 16, 16, nullptr);
  EXPECT_THROW(gc::fit_psf_beam(psf), gpuclean::clean::InvalidInput);
}

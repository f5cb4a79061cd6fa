#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "io/fits_reader.hpp"
#include "io/wcs.hpp"

namespace gio = gpuclean::io;

namespace {
gio::FitsHeader sin_header(double dec0) {
  gio::FitsHeader h;
  h.set_string("CTYPE1", "RA---SIN");
  h.set_string("CTYPE2", "DEC--SIN");
  h.set_double("CRPIX1", 129.0);
  h.set_double("CRPIX2", 129.0);
  h.set_double("CRVAL1", 53.1166666666667);
  h.set_double("CRVAL2", dec0);
  h.set_double("CDELT1", -0.000666666666666667);
  h.set_double("CDELT2", 0.000666666666666667);
  return h;
}
}  // namespace

TEST(Wcs, ReferencePixelIsTheReferenceValue) {
  const auto w = gio::CelestialWcs::from_header(sin_header(-27.8083333333333));
  ASSERT_TRUE(w);
  double ra = 0, dec = 0;
  w->pixel_to_world(128.0, 128.0, &ra, &dec);  // 0-based pixel of CRPIX 129
  EXPECT_NEAR(ra, 53.1166666666667, 1e-10);
  EXPECT_NEAR(dec, -27.8083333333333, 1e-10);
  EXPECT_NEAR(w->pixel_scale_deg(), 0.000666666666666667, 1e-15);
}

TEST(Wcs, MatchesAstropyForTheWscleanHeader) {
  // Reference values from astropy 5.2 (WCS.pixel_to_world_values) on the same header.
  const auto w = gio::CelestialWcs::from_header(sin_header(-27.8083333333333));
  ASSERT_TRUE(w);
  double ra = 0, dec = 0;
  w->pixel_to_world(10.0, 20.0, &ra, &dec);
  EXPECT_NEAR(ra, 53.20566355, 2e-8);
  EXPECT_NEAR(dec, -27.88030485, 2e-8);
  w->pixel_to_world(218.0, 154.0, &ra, &dec);
  EXPECT_NEAR(ra, 53.048843552, 2e-8);
  EXPECT_NEAR(dec, -27.790983433, 2e-8);
}

TEST(Wcs, NorthPoleSymmetry) {
  // At the pole, one pixel north along -y leads to the same declination for any RA offset.
  const auto w = gio::CelestialWcs::from_header(sin_header(90.0));
  double ra1, dec1, ra2, dec2;
  w->pixel_to_world(128.0 + 30.0, 128.0, &ra1, &dec1);
  w->pixel_to_world(128.0, 128.0 + 30.0, &ra2, &dec2);
  EXPECT_NEAR(dec1, dec2, 1e-9);
  EXPECT_NEAR(std::abs(std::fmod(ra1 - ra2 + 360.0, 360.0)), 90.0, 1e-9);
}

TEST(Wcs, NoCelestialAxesGivesNothing) {
  gio::FitsHeader h;
  h.set_string("CTYPE1", "FREQ");
  EXPECT_FALSE(gio::CelestialWcs::from_header(h));
}

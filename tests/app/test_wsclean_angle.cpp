// WSClean's angle syntax for -scale (degrees by default) and -taper-gaussian (arcseconds).
#include <gtest/gtest.h>

#include <cmath>

#include "app/wsclean/wsclean_angle.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

constexpr double kDeg = M_PI / 180;

TEST(WscleanAngle, UnitsAndDefaults) {
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("0.01", "-scale", AngleUnit::kDegrees), 0.01 * kDeg);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("20", "-taper-gaussian", AngleUnit::kArcseconds), 20 * kDeg / 3600);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("4asec", "-scale", AngleUnit::kDegrees), 4 * kDeg / 3600);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("4 ARCSEC", "-scale", AngleUnit::kDegrees), 4 * kDeg / 3600);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("1.5amin", "-scale", AngleUnit::kDegrees), 1.5 * kDeg / 60);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("2''", "-scale", AngleUnit::kDegrees), 2 * kDeg / 3600);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("3'", "-scale", AngleUnit::kDegrees), 3 * kDeg / 60);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("250mas", "-scale", AngleUnit::kDegrees), 0.25 * kDeg / 3600);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("0.001rad", "-scale", AngleUnit::kDegrees), 0.001);
  EXPECT_DOUBLE_EQ(parse_wsclean_angle("1deg", "-taper-gaussian", AngleUnit::kArcseconds), kDeg);
}

TEST(WscleanAngle, RefusesWhatIsNoAngle) {
  EXPECT_THROW(parse_wsclean_angle("asec", "-scale", AngleUnit::kDegrees), clean::InvalidSettings);
  EXPECT_THROW(parse_wsclean_angle("1parsec", "-scale", AngleUnit::kDegrees), clean::InvalidSettings);
  EXPECT_THROW(parse_wsclean_angle("inf", "-scale", AngleUnit::kDegrees), clean::InvalidSettings);
  EXPECT_THROW(parse_wsclean_angle("", "-scale", AngleUnit::kDegrees), clean::InvalidSettings);
}

}  // namespace
}  // namespace gpuclean::app

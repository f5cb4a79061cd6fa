// power_beam_image and its SIN geometry (issue 47): distances, symmetry, the peak at the pointing.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "beam/beam_image.hpp"

using namespace gpuclean::beam;

namespace {

constexpr double kArcsec = std::numbers::pi / (180.0 * 3600.0);

ImageGrid grid(std::size_t w, std::size_t h, double scale_arcsec, RaDec centre = {1.1, -0.52}) {
  ImageGrid g;
  g.width = w;
  g.height = h;
  g.scale_l = g.scale_m = scale_arcsec * kArcsec;
  g.phase_centre = centre;
  return g;
}

}  // namespace

TEST(BeamImage, SinProjectionRoundTrips) {
  const RaDec centre{2.3, 0.7};
  for (double l : {-0.3, -1e-4, 0.0, 0.05, 0.4}) {
    for (double m : {-0.5, 0.0, 2e-3, 0.3}) {
      double l2, m2;
      radec_to_lm(lm_to_radec(l, m, centre), centre, l2, m2);
      EXPECT_NEAR(l2, l, 1e-14);
      EXPECT_NEAR(m2, m, 1e-14);
    }
  }
}

TEST(BeamImage, PixelDistanceIsAsinOfTheDirectionCosines) {
  // A 4.3° wide grid: the distance of a pixel at (l, m) from the phase centre is asin(sqrt(l² + m²)).
  const ImageGrid g = grid(512, 384, 30.0);
  const std::vector<double> d = distance_image(g, g.phase_centre);
  EXPECT_EQ(d[(g.height / 2) * g.width + g.width / 2], 0.0);
  for (const auto& [x, y] : {std::pair{0, 0}, std::pair{511, 383}, std::pair{256, 0}, std::pair{10, 300},
                             std::pair{300, 192}, std::pair{257, 193}}) {
    double l, m;
    pixel_lm(g, x, y, l, m);
    EXPECT_DOUBLE_EQ(l, (256.0 - x) * g.scale_l);
    EXPECT_DOUBLE_EQ(m, (y - 192.0) * g.scale_m);
    const double expected = std::asin(std::sqrt(l * l + m * m));
    EXPECT_NEAR(d[y * g.width + x], expected, 1e-15) << x << "," << y;
    EXPECT_NEAR(angular_distance(lm_to_radec(l, m, g.phase_centre), g.phase_centre), expected, 1e-15);
  }
  // EveryBeam's radius is the sine of it.
  BeamImageOptions eb;
  eb.everybeam_geometry = true;
  const std::vector<double> s = distance_image(g, g.phase_centre, eb);
  double l, m;
  pixel_lm(g, 0, 0, l, m);
  EXPECT_NEAR(s[0], std::sqrt(l * l + m * m), 1e-15);
  EXPECT_GT(d[0] - s[0], 0.0);
}

TEST(BeamImage, CentredPointingGivesASymmetricBeamWithOneInTheMiddle) {
  const ImageGrid g = grid(256, 256, 20.0);
  const DishModel meerkat(DishTelescope::kMeerKAT);
  const std::vector<double> pb = power_beam_image(meerkat, g, g.phase_centre, 1.284e9);
  const std::size_t c = 128;
  EXPECT_DOUBLE_EQ(pb[c * 256 + c], 1.0);
  EXPECT_EQ(*std::max_element(pb.begin(), pb.end()), 1.0);
  for (std::size_t dy = 0; dy < 128; dy += 7) {
    for (std::size_t dx = 0; dx < 128; dx += 5) {
      const double v = pb[(c + dy) * 256 + (c + dx)];
      EXPECT_NEAR(pb[(c - dy) * 256 + (c + dx)], v, 1e-14);
      EXPECT_NEAR(pb[(c + dy) * 256 + (c - dx)], v, 1e-14);
      EXPECT_NEAR(pb[(c - dy) * 256 + (c - dx)], v, 1e-14);
      EXPECT_NEAR(pb[(c + dx) * 256 + (c + dy)], v, 1e-14);  // square pixels: symmetric in x ↔ y
    }
  }
  // Half power 30.18′ from the centre: 90.5 pixels of 20″.
  EXPECT_GT(pb[c * 256 + c + 90], 0.5);
  EXPECT_LT(pb[c * 256 + c + 91], 0.5);
}

TEST(BeamImage, OffsetPointingMovesThePeak) {
  const ImageGrid g = grid(200, 160, 15.0);
  double l, m;
  pixel_lm(g, 130, 60, l, m);
  const RaDec pointing = lm_to_radec(l, m, g.phase_centre);
  const DishModel vla(DishTelescope::kVLA);
  for (bool everybeam : {false, true}) {
    BeamImageOptions options;
    options.everybeam_geometry = everybeam;
    const std::vector<double> pb = power_beam_image(vla, g, pointing, 1.4e9, options);
    const auto peak = std::max_element(pb.begin(), pb.end()) - pb.begin();
    EXPECT_EQ(peak, 60 * 200 + 130) << everybeam;
    const std::vector<double> d = distance_image(g, pointing, options);
    // EveryBeam's shifted geometry is exact only to second order in the pointing's offset (here
    // 26′): its radius at the pointing is 3.3e-6 rad (0.68″), and its vp² there 1 − 3.6e-7.
    EXPECT_NEAR(pb[peak], 1.0, everybeam ? 1e-6 : 1e-15) << everybeam;
    EXPECT_NEAR(d[peak], 0.0, everybeam ? 5e-6 : 1e-15);
  }
  // The exact distances from the pointing.
  const std::vector<double> d = distance_image(g, pointing);
  for (const auto& [x, y] : {std::pair{0, 0}, std::pair{199, 159}, std::pair{100, 80}}) {
    double lx, my;
    pixel_lm(g, x, y, lx, my);
    EXPECT_NEAR(d[y * 200 + x], angular_distance(lm_to_radec(lx, my, g.phase_centre), pointing), 1e-15);
  }
}

TEST(BeamImage, ThreadsGiveTheSameImage) {
  const ImageGrid g = grid(96, 64, 40.0);
  const DishModel gmrt(DishTelescope::kGMRT);
  BeamImageOptions one, many;
  many.threads = 4;
  EXPECT_EQ(power_beam_image(gmrt, g, {1.101, -0.519}, 610e6, one),
            power_beam_image(gmrt, g, {1.101, -0.519}, 610e6, many));
}

TEST(BeamImage, PixelsWithoutADirectionHaveNoBeam) {
  // 64 pixels of 1.5°: the corners are at l² + m² = 1.4.
  const ImageGrid g = grid(64, 64, 1.5 * 3600);
  const std::vector<double> pb = power_beam_image(DishModel(DishTelescope::kASKAP), g, g.phase_centre, 888e6);
  const std::vector<double> d = distance_image(g, g.phase_centre);
  EXPECT_EQ(pb[0], 0.0);
  EXPECT_TRUE(std::isnan(d[0]));
  EXPECT_EQ(pb[32 * 64 + 32], 1.0);
}

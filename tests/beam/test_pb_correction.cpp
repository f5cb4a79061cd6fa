// WSClean's -pb correction of a dish's images and its beam-k images (issue 47).

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <span>
#include <stdexcept>
#include <vector>

#include "beam/beam_image.hpp"
#include "beam/pb_correction.hpp"

using namespace gpuclean::beam;

TEST(PbCorrection, LimitsPerSetAndVersion) {
  const double limit = 0.005;
  // 3.7, I (and RR/LL alone): vp² > limit.
  EXPECT_FALSE(pb_keeps_pixel(0.005, PbPolarizations::kStokesI, limit));
  EXPECT_TRUE(pb_keeps_pixel(0.0050001, PbPolarizations::kStokesI, limit));
  EXPECT_FALSE(pb_keeps_pixel(0.004, PbPolarizations::kSingleCircular, limit));
  // 3.7, XX,YY: 2 vp⁴ > limit², vp² > limit / √2 = 0.0035355.
  EXPECT_TRUE(pb_keeps_pixel(0.00354, PbPolarizations::kXXYY, limit));
  EXPECT_FALSE(pb_keeps_pixel(0.00353, PbPolarizations::kXXYY, limit));
  // 3.7 IQUV and 3.1 for every set: 4 vp⁴ > limit², vp² > limit / 2.
  for (auto [pols, version] : {std::pair{PbPolarizations::kFullStokes, WscleanVersion::k37},
                               std::pair{PbPolarizations::kStokesI, WscleanVersion::k31},
                               std::pair{PbPolarizations::kXXYY, WscleanVersion::k31},
                               std::pair{PbPolarizations::kSingleCircular, WscleanVersion::k31},
                               std::pair{PbPolarizations::kFullStokes, WscleanVersion::k31}}) {
    EXPECT_TRUE(pb_keeps_pixel(0.00251, pols, limit, version));
    EXPECT_FALSE(pb_keeps_pixel(0.00249, pols, limit, version));
  }
  // -primary-beam-limit 0 keeps every pixel with a beam.
  EXPECT_TRUE(pb_keeps_pixel(1e-8, PbPolarizations::kStokesI, 0.0));
  EXPECT_FALSE(pb_keeps_pixel(0.0, PbPolarizations::kStokesI, 0.0));
}

TEST(PbCorrection, DividesAboveTheLimitAndIsNanBelow) {
  ImageGrid g;
  g.width = 128;
  g.height = 128;
  g.scale_l = g.scale_m = 60.0 * std::numbers::pi / (180 * 3600);  // 1′ pixels: past MeerKAT's edge
  g.phase_centre = {0.3, -0.9};
  const std::vector<double> pb = power_beam_image(DishModel(DishTelescope::kMeerKAT), g, g.phase_centre, 1.284e9);
  std::vector<float> image(pb.size());
  for (std::size_t i = 0; i != image.size(); ++i) image[i] = 0.25f + 0.001f * static_cast<float>(i % 97);
  std::vector<float> corrected = image;
  correct_plane(corrected, pb, PbPolarizations::kStokesI);
  std::size_t nan = 0, kept = 0;
  for (std::size_t i = 0; i != image.size(); ++i) {
    if (pb[i] > 0.005) {
      ++kept;
      EXPECT_FLOAT_EQ(corrected[i], static_cast<float>(image[i] / pb[i]));
    } else {
      ++nan;
      EXPECT_TRUE(std::isnan(corrected[i]));
    }
  }
  EXPECT_GT(nan, 1000u);  // beyond MeerKAT's edge (55.3′ at 1.284 GHz) the power beam is 1e-8
  EXPECT_GT(kept, 1000u);
  EXPECT_EQ(corrected[64 * 128 + 64], image[64 * 128 + 64]);  // vp² = 1 at the pointing

  // IQUV: every plane alike, NaN in all four below the (3.7: limit / 2) threshold.
  std::vector<std::vector<float>> iquv(4, image);
  for (std::size_t p = 0; p != 4; ++p)
    for (float& v : iquv[p]) v *= static_cast<float>(p + 1);
  const std::span<float> planes[] = {iquv[0], iquv[1], iquv[2], iquv[3]};
  correct_planes(planes, pb, PbPolarizations::kFullStokes);
  for (std::size_t i = 0; i != image.size(); ++i) {
    for (std::size_t p = 0; p != 4; ++p) {
      if (pb[i] > 0.0025) {
        EXPECT_FLOAT_EQ(iquv[p][i], static_cast<float>(image[i] * float(p + 1) / pb[i]));
      } else {
        EXPECT_TRUE(std::isnan(iquv[p][i]));
      }
    }
  }
}

TEST(PbCorrection, RefusesMismatchedInputs) {
  std::vector<float> a(10), b(10);
  const std::vector<double> pb(10, 1.0), pb9(9, 1.0);
  EXPECT_THROW(correct_plane(a, pb9, PbPolarizations::kStokesI), std::invalid_argument);
  const std::span<float> one[] = {a};
  const std::span<float> two[] = {a, b};
  EXPECT_THROW(correct_planes(one, pb, PbPolarizations::kXXYY), std::invalid_argument);
  EXPECT_THROW(correct_planes(two, pb, PbPolarizations::kFullStokes), std::invalid_argument);
  EXPECT_NO_THROW(correct_planes(two, pb, PbPolarizations::kXXYY));
}

TEST(PbCorrection, MuellerImagesOfADish) {
  const std::vector<double> pb = {1.0, 0.5, 0.01};
  const std::vector<MuellerTerm> all = mueller_terms(PbPolarizations::kStokesI);  // WSClean 3.1
  ASSERT_EQ(all.size(), 16u);
  for (int k = 0; k != 16; ++k) {
    EXPECT_EQ(all[k].index, k);
    const bool diagonal = k == 0 || k == 3 || k == 8 || k == 15;
    EXPECT_EQ(all[k].is_power_beam, diagonal) << k;
    const std::vector<float> img = mueller_image(all[k], pb);
    const std::vector<float> expected = diagonal ? std::vector<float>{1.0f, 0.5f, 0.01f} : std::vector<float>(3, 0.0f);
    EXPECT_EQ(img, expected) << k;
  }
  EXPECT_EQ(mueller_terms(PbPolarizations::kFullStokes, WscleanVersion::k31).size(), 16u);
  const auto indices = [](const std::vector<MuellerTerm>& terms) {
    std::vector<int> out;
    for (const MuellerTerm& t : terms) out.push_back(t.index);
    return out;
  };
  EXPECT_EQ(indices(mueller_terms(PbPolarizations::kStokesI, WscleanVersion::k37)), (std::vector<int>{0, 9, 15}));
  EXPECT_EQ(indices(mueller_terms(PbPolarizations::kSingleCircular, WscleanVersion::k37)),
            (std::vector<int>{0, 9, 15}));
  EXPECT_EQ(indices(mueller_terms(PbPolarizations::kXXYY, WscleanVersion::k37)), (std::vector<int>{0, 9, 10, 15}));
  EXPECT_EQ(mueller_terms(PbPolarizations::kFullStokes, WscleanVersion::k37).size(), 16u);
  EXPECT_FALSE(mueller_terms(PbPolarizations::kXXYY, WscleanVersion::k37)[1].is_power_beam);  // M30 = 0
}

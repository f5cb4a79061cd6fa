// The MFS images of a channel set (clean/mfs.hpp), against what they must be: the weighted means
// of the channels' images, restored with the beam fitted to the weighted mean PSF.
#include <gtest/gtest.h>

#include <cmath>

#include "clean/mfs.hpp"
#include "clean/psf.hpp"

namespace gc = gpuclean::clean;

namespace {

gc::PreparedPsf gaussian_psf(std::size_t n, double sigma) {
  gc::HostImage img(n, n);
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x) {
      const double dx = static_cast<double>(x) - n / 2.0, dy = static_cast<double>(y) - n / 2.0;
      img.at(x, y) = static_cast<float>(std::exp(-(dx * dx + dy * dy) / (2 * sigma * sigma)));
    }
  return gc::prepare_psf(img, n, n, nullptr);
}

}  // namespace

TEST(Mfs, WeightedMeansRestoredWithTheMeanPsfsBeam) {
  const std::size_t n = 64;
  const gc::PreparedPsf narrow = gaussian_psf(n, 2.0), wide = gaussian_psf(n, 3.0);
  gc::HostImage dirty(n, n), r0(n, n, 1.0f), r1(n, n, 2.0f), m0(n, n), m1(n, n);
  m0.at(20, 30) = 1.0f;
  m1.at(20, 30) = 2.0f;
  const std::vector<gc::CleanPlane> channels = {{&dirty, &narrow, 1.0e9, 1.0}, {&dirty, &wide, 1.2e9, 3.0}};
  const gc::MfsImages mfs = gc::mfs_images(channels, {&r0, &r1}, {&m0, &m1}, nullptr, gc::BeamFit::kWsclean, 1);
  EXPECT_FLOAT_EQ(mfs.residual.at(5, 5), 1.75f);
  EXPECT_FLOAT_EQ(mfs.model.at(20, 30), 1.75f);
  EXPECT_FLOAT_EQ(mfs.model.at(21, 30), 0.0f);
  // The mean PSF is wider than the narrow channel's and narrower than the wide one's.
  const double fwhm = 2.0 * std::sqrt(2.0 * std::log(2.0));
  EXPECT_GT(mfs.beam.fwhm_major_pixels(), 2.0 * fwhm);
  EXPECT_LT(mfs.beam.fwhm_major_pixels(), 3.0 * fwhm);
  // Restored: the model (x) a unit-peak beam + the residual.
  EXPECT_NEAR(mfs.restored.at(20, 30), 1.75 + 1.75, 1e-4);
  // A given beam restores instead of the fitted one.
  const gc::PixelGaussian given = gc::fit_psf_beam(narrow);
  const gc::MfsImages fixed = gc::mfs_images(channels, {&r0, &r1}, {&m0, &m1}, &given, gc::BeamFit::kWsclean, 1);
  EXPECT_DOUBLE_EQ(fixed.beam.fwhm_major_pixels(), given.fwhm_major_pixels());
  EXPECT_LT(fixed.restored.at(22, 30), mfs.restored.at(22, 30));  // the narrower beam falls faster
}

// A run's model as sources (clean/source_list.hpp), against hand-made results: components at one
// pixel and scale make one source, in the order first cleaned; a source's plane fluxes are its
// components' sums; its spectrum is fitted as a whole (a polynomial's terms are then its
// components' summed terms), or, without a fit, is the planes' weighted mean.
#include <gtest/gtest.h>

#include <cmath>

#include "clean/source_list.hpp"
#include "clean/spectral_fit.hpp"

namespace gc = gpuclean::clean;

namespace {

// Three planes; components at (3, 4) scale 0 twice, (3, 4) scale 1, and (7, 1) scale 0.
gc::CleanResult joined_result() {
  gc::CleanResult r;
  r.components.list = {{3, 4, 0.0f, 0}, {7, 1, 0.0f, 0}, {3, 4, 0.0f, 0}, {3, 4, 0.0f, 1}};
  r.components.plane_fluxes = {1.0f, 2.0f, 3.0f,   0.5f, 0.5f, 0.5f,   0.25f, 0.5f, 0.75f,   4.0f, 2.0f, 1.0f};
  r.components.scales = {{0.0}, {8.0}};
  r.components.reference_frequency_hz = 1.4e9;
  return r;
}

const std::vector<double> kFrequencies = {1.2e9, 1.4e9, 1.6e9};
const std::vector<double> kWeights = {1.0, 2.0, 1.0};

}  // namespace

TEST(SourceList, OneSourcePerPixelAndScaleInTheOrderFirstCleaned) {
  const gc::CleanResult r = joined_result();
  const std::vector<gc::ModelSource> s = gc::model_sources(r);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].x, 3u);
  EXPECT_EQ(s[0].scale, 0u);
  EXPECT_EQ(s[0].components, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(s[1].x, 7u);
  EXPECT_EQ(s[2].scale, 1u);
  EXPECT_EQ(s[2].components, (std::vector<std::size_t>{3}));
  EXPECT_DOUBLE_EQ(gc::source_flux(r, s[0], 2, 3), 3.75);
  // A run of one plane: the components' own fluxes.
  gc::CleanResult one;
  one.components.list = {{5, 5, 0.5f, 0}, {5, 5, 0.25f, 0}};
  EXPECT_DOUBLE_EQ(gc::source_flux(one, gc::model_sources(one).at(0), 0, 1), 0.75);
}

TEST(SourceList, PolynomialTermsAreTheSummedComponentsTerms) {
  const gc::CleanResult r = joined_result();
  const std::vector<gc::FittedSource> f = gc::fitted_sources(r, kFrequencies, kWeights, {2, false});
  ASSERT_EQ(f.size(), 3u);
  const gc::SpectralFit fit(kFrequencies, kWeights, 2, 1.4e9);
  double a[2], b[2];
  fit.fit_terms(&r.components.plane_fluxes[0], a);
  fit.fit_terms(&r.components.plane_fluxes[6], b);
  ASSERT_EQ(f[0].terms.size(), 2u);
  EXPECT_NEAR(f[0].terms[0], a[0] + b[0], 1e-6);
  EXPECT_NEAR(f[0].terms[1], a[1] + b[1], 1e-6);
  EXPECT_DOUBLE_EQ(f[0].fwhm_pixels, 0.0);  // the delta scale: a point source
  EXPECT_DOUBLE_EQ(f[2].fwhm_pixels, gc::scale_fwhm_pixels(8.0));
  EXPECT_NEAR(gc::scale_fwhm_pixels(8.0), 2.0 * std::sqrt(2.0 * std::log(2.0)) * 1.5, 1e-12);
}

TEST(SourceList, WithoutAFitASourceIsItsWeightedMean) {
  const std::vector<gc::FittedSource> f = gc::fitted_sources(joined_result(), kFrequencies, kWeights, {0, false});
  ASSERT_EQ(f.size(), 3u);
  ASSERT_EQ(f[0].terms.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].terms[0], (1.25 + 2 * 2.5 + 3.75) / 4.0);
  EXPECT_DOUBLE_EQ(f[2].terms[0], (4.0 + 2 * 2.0 + 1.0) / 4.0);
}

TEST(SourceList, LogarithmicTermsFitTheSummedSpectrum) {
  // A power law S = 2 (nu / 1.4 GHz)^-0.7 split over two components: the fit of the sum finds it.
  gc::CleanResult r;
  r.components.reference_frequency_hz = 1.4e9;
  r.components.scales = {{0.0}};
  r.components.list = {{1, 1, 0.0f, 0}, {1, 1, 0.0f, 0}};
  for (int c = 0; c < 2; ++c)
    for (double nu : kFrequencies) r.components.plane_fluxes.push_back(static_cast<float>(std::pow(nu / 1.4e9, -0.7)));
  const std::vector<gc::FittedSource> f = gc::fitted_sources(r, kFrequencies, kWeights, {2, true});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(f[0].terms[0], 2.0, 1e-5);
  EXPECT_NEAR(f[0].terms[1], -0.7, 1e-5);
}

// The simulator's weighting (WSClean's definitions) and what it is for: with Briggs 0, the
// restoring beam fitted to a MeerKAT PSF covers the PSF's main lobe, as in the images
// astronomers make; with natural weighting it is about twice as wide (a spike on a plateau).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "clean/beam.hpp"
#include "clean/psf.hpp"
#include "data/simulate.hpp"
#include "data/weighting.hpp"
#include "io/fits_reader.hpp"
#include "tests/support/paths.hpp"

namespace gd = gpuclean::data;
namespace gc = gpuclean::clean;

namespace {

// Area [pixels^2] of the PSF's main lobe above half power: the connected region around the
// centre, sampled 8 x 8 per pixel with bilinear interpolation.
double half_power_area(const std::vector<float>& psf, std::size_t n) {
  constexpr int kSub = 8;
  const long c = static_cast<long>(n / 2), reach = 40 * kSub, side = 2 * reach + 1;
  const auto value = [&](long fx, long fy) {
    const double x = static_cast<double>(c) + static_cast<double>(fx) / kSub;
    const double y = static_cast<double>(c) + static_cast<double>(fy) / kSub;
    const auto x0 = static_cast<std::size_t>(std::floor(x)), y0 = static_cast<std::size_t>(std::floor(y));
    const double tx = x - static_cast<double>(x0), ty = y - static_cast<double>(y0);
    const auto at = [&](std::size_t xx, std::size_t yy) { return static_cast<double>(psf[yy * n + xx]); };
    return (1 - ty) * ((1 - tx) * at(x0, y0) + tx * at(x0 + 1, y0)) + ty * ((1 - tx) * at(x0, y0 + 1) + tx * at(x0 + 1, y0 + 1));
  };
  std::vector<char> seen(static_cast<std::size_t>(side * side), 0);
  std::vector<std::pair<long, long>> stack = {{0, 0}};
  std::size_t count = 0;
  while (!stack.empty()) {
    const auto [fx, fy] = stack.back();
    stack.pop_back();
    if (std::abs(fx) >= reach || std::abs(fy) >= reach) continue;
    char& s = seen[static_cast<std::size_t>((fy + reach) * side + fx + reach)];
    if (s || value(fx, fy) < 0.5) continue;
    s = 1;
    ++count;
    stack.insert(stack.end(), {{fx + 1, fy}, {fx - 1, fy}, {fx, fy + 1}, {fx, fy - 1}});
  }
  return static_cast<double>(count) / (kSub * kSub);
}

// Half-power area of the restoring beam fitted to `psf` (WSClean's fit), over the main lobe's.
double beam_to_lobe_area(const std::vector<float>& psf, std::size_t n) {
  gc::HostImage image(n, n);
  image.pixels = psf;
  const gc::PixelGaussian beam = gc::fit_psf_beam(gc::prepare_psf(image, n, n, nullptr));
  const double beam_area = std::numbers::pi / 4.0 * beam.fwhm_major_pixels() * beam.fwhm_minor_pixels();
  return beam_area / half_power_area(psf, n);
}

gd::SimulationSettings meerkat(const gd::Weighting& w) {
  gd::SimulationSettings s;
  s.size = 256;
  s.noise = 0.0;
  s.weighting = w;
  return s;
}

}  // namespace

TEST(Weighting, DefinitionsAreWscleans) {
  // Cells holding 10 in all and 30 in squares: the average cell weight is 3.
  const gd::SampleWeight natural({gd::WeightingMode::kNatural, 0.0}, 10, 30);
  const gd::SampleWeight uniform({gd::WeightingMode::kUniform, 0.0}, 10, 30);
  const gd::SampleWeight briggs0({gd::WeightingMode::kBriggs, 0.0}, 10, 30);
  const gd::SampleWeight briggs1({gd::WeightingMode::kBriggs, 1.0}, 10, 30);
  EXPECT_DOUBLE_EQ(natural(4.0), 1.0);
  EXPECT_DOUBLE_EQ(uniform(4.0), 0.25);
  EXPECT_DOUBLE_EQ(briggs0(2.0), 1.0 / (1.0 + 25.0 / 3.0 * 2.0));   // f^2 = 5^2 / 3
  EXPECT_DOUBLE_EQ(briggs1(2.0), 1.0 / (1.0 + 0.25 / 3.0 * 2.0));   // f^2 = 0.5^2 / 3
}

TEST(Weighting, ParsesTheCommandLinesWords) {
  EXPECT_EQ(gd::parse_weighting({"natural"}).mode, gd::WeightingMode::kNatural);
  EXPECT_EQ(gd::parse_weighting({"uniform"}).mode, gd::WeightingMode::kUniform);
  const gd::Weighting b = gd::parse_weighting({"briggs", "-0.5"});
  EXPECT_EQ(b.mode, gd::WeightingMode::kBriggs);
  EXPECT_DOUBLE_EQ(b.robust, -0.5);
  EXPECT_EQ(gd::to_string(b), "briggs -0.5");
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {}, {"briggs"}, {"briggs", "x"}, {"briggs", "nan"}, {"uniform", "1"}, {"robust"}}) {
    EXPECT_THROW(gd::parse_weighting(bad), std::invalid_argument);
  }
}

TEST(Weighting, BriggsZeroBeamMatchesTheMainLobe) {
  const gd::Simulation sim = gd::simulate_sky(meerkat({}), {});
  EXPECT_NEAR(beam_to_lobe_area(sim.psf, sim.size), 1.0, 0.3);
}

TEST(Weighting, NaturalWeightingBeamIsFarWiderThanTheSpike) {
  // What the default changed: MeerKAT's natural PSF is a spike on a plateau, and the beam fitted
  // to it covers far more than the spike's half-power area.
  const gd::Simulation sim = gd::simulate_sky(meerkat({gd::WeightingMode::kNatural, 0.0}), {});
  EXPECT_GT(beam_to_lobe_area(sim.psf, sim.size), 1.3);
}

TEST(Weighting, UniformNarrowsThePsfAndBriggsLiesBetween) {
  // At a fixed pixel scale the main lobe shrinks from natural through Briggs 0 to uniform.
  auto s = meerkat({gd::WeightingMode::kNatural, 0.0});
  s.pixel_arcsec = 2.0;
  const double natural = half_power_area(gd::simulate_sky(s, {}).psf, s.size);
  s.weighting = {gd::WeightingMode::kBriggs, 0.0};
  const double briggs = half_power_area(gd::simulate_sky(s, {}).psf, s.size);
  s.weighting = {gd::WeightingMode::kUniform, 0.0};
  const double uniform = half_power_area(gd::simulate_sky(s, {}).psf, s.size);
  EXPECT_GT(natural, briggs);
  EXPECT_GT(briggs, uniform);
}

TEST(Weighting, BundledSampleBeamMatchesTheMainLobe) {
  const auto psf = gpuclean::io::read_fits_image(gpuclean::test::source_dir() + "/data/sample/psf.fits");
  ASSERT_EQ(psf.width, psf.height);
  EXPECT_NEAR(beam_to_lobe_area(psf.pixels, psf.width), 1.0, 0.3);
}

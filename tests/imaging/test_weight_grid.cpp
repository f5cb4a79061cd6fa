// The weight grid on hand-made cases: WSClean's padded size, cell mapping and edges, the three
// finishing rules, the rank filter's prefix sums against WSClean's direct window mean, and the
// Gaussian taper at the cell's coordinates.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "imaging/weight_tapers.hpp"
#include "imaging/weighting.hpp"

namespace gpuclean::imaging {
namespace {

TEST(WeightGrid, PaddedSizeIsCeilingRoundedUpToFour) {
  EXPECT_EQ(padded_size(64, 1.2), 80u);  // 76.8 → 77 → 80
  EXPECT_EQ(padded_size(100, 1.0), 100u);
  EXPECT_EQ(padded_size(101, 1.0), 104u);
  EXPECT_EQ(padded_size(128, 1.5), 192u);
}

TEST(WeightGrid, CellMappingMirrorsNegativeVAndDropsOutside) {
  // 8 × 8 padded pixels of 0.01 rad: a cell is 1/(8·0.01) = 12.5 λ; x = floor(u/12.5 + 4), y = floor(v/12.5).
  WeightGrid g(8, 8, 0.01, 0.01);
  ASSERT_EQ(g.width(), 8u);
  ASSERT_EQ(g.rows(), 4u);
  std::size_t x = 0, y = 0;
  ASSERT_TRUE(g.cell(0.0, 0.0, x, y));
  EXPECT_EQ(x, 4u); EXPECT_EQ(y, 0u);
  ASSERT_TRUE(g.cell(-12.5, 12.5, x, y));  // a cell's low edge belongs to it
  EXPECT_EQ(x, 3u); EXPECT_EQ(y, 1u);
  ASSERT_TRUE(g.cell(20.0, -30.0, x, y));  // (−20, 30)
  EXPECT_EQ(x, 2u); EXPECT_EQ(y, 2u);
  EXPECT_FALSE(g.cell(-50.1, 0, x, y));   // x = −1
  EXPECT_TRUE(g.cell(-50.0, 0, x, y));    // x = 0
  EXPECT_FALSE(g.cell(50.0, 0, x, y));    // x = 8
  EXPECT_FALSE(g.cell(0, 50.0, x, y));    // y = 4
  EXPECT_FALSE(g.cell(std::nan(""), 0, x, y));
  g.add(1, 1, 2.0), g.add(1, -1, 3.0), g.add(0, 60, 5.0);  // the last is outside: not in the total
  EXPECT_EQ(g.total(), 5.0);
  EXPECT_EQ(g.lookup(1, 1), 2.0);   // cell (4, 0)
  EXPECT_EQ(g.lookup(-1, 1), 3.0);  // (1, −1) mirrors to (−1, 1): cell (3, 0)
  EXPECT_EQ(g.lookup(1, -1), 3.0);
  EXPECT_EQ(g.lookup(0, 60), 0.0);
  EXPECT_EQ(WeightGrid(7, 9, 1, 1).width(), 8u);  // odd sizes are made even
  EXPECT_EQ(WeightGrid(7, 9, 1, 1).rows(), 5u);
}

WeightGrid three_cells() {
  WeightGrid g(8, 8, 0.01, 0.01);
  g.add(1, 1, 1.0), g.add(1, 1, 3.0), g.add(20, 20, 2.0);  // cells 4 and 2, total 6
  return g;
}

TEST(WeightGrid, FinishingRules) {
  WeightingSettings s;
  s.rank_filter_level = 0;
  s.mode = WeightMode::kNatural;
  WeightGrid g = three_cells();
  finish_weights(g, s);
  EXPECT_EQ(g.lookup(1, 1), 1.0); EXPECT_EQ(g.lookup(20, 20), 1.0); EXPECT_EQ(g.lookup(40, 40), 0.0);
  s.mode = WeightMode::kUniform;
  g = three_cells();
  finish_weights(g, s);
  EXPECT_EQ(g.lookup(1, 1), 0.25); EXPECT_EQ(g.lookup(20, 20), 0.5); EXPECT_EQ(g.lookup(40, 40), 0.0);
  // Briggs R = 1: avg = (16 + 4)/6, s² = (5·10⁻¹)²/avg = 0.075; 1/(1 + C·s²).
  s.mode = WeightMode::kBriggs;
  s.briggs_robustness = 1;
  g = three_cells();
  finish_weights(g, s);
  EXPECT_NEAR(g.lookup(1, 1), 1 / 1.3, 1e-15);
  EXPECT_NEAR(g.lookup(20, 20), 1 / 1.15, 1e-15);
  EXPECT_EQ(g.lookup(40, 40), 0.0);  // 3.6: empty cells stay 0
  s.briggs_empty_cells_one = true;
  g = three_cells();
  finish_weights(g, s);
  EXPECT_EQ(g.lookup(40, 40), 1.0);  // 3.1: 1/(1 + 0)
}

/// WSClean's windowMean, read cell by cell (W31:structures/imageweights.cpp).
double window_mean(const WeightGrid& g, std::size_t x, std::size_t y, std::size_t window) {
  const std::size_t d = window / 2;
  const std::size_t x1 = x <= d ? 0 : x - d, y1 = y <= d ? 0 : y - d;
  const std::size_t x2 = x + d >= g.width() ? g.width() : x + d, y2 = y + d >= g.rows() ? g.rows() : y + d;
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t yi = y1; yi < y2; ++yi)
    for (std::size_t xi = x1; xi < x2; ++xi)
      if (const double w = g.cells()[yi * g.width() + xi]; w != 0) sum += w, ++n;
  return sum / static_cast<double>(n);
}

TEST(WeightGrid, RankFilterEqualsTheDirectWindowMean) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> value(0.01, 10);
  std::bernoulli_distribution occupied(0.3);
  for (const std::size_t window : {16u, 6u, 5u, 2u, 1u}) {
    WeightGrid g(40, 30, 1, 1);
    for (double& c : g.cells())
      if (occupied(rng)) c = value(rng) * value(rng);
    WeightGrid expected = g;
    std::size_t changed = 0;
    for (std::size_t y = 0; y < g.rows(); ++y)
      for (std::size_t x = 0; x < g.width(); ++x) {
        const double w = g.cells()[y * g.width() + x];
        if (w == 0) continue;
        const double mean = window_mean(g, x, y, window);
        if (w > mean * 2) expected.cells()[y * g.width() + x] = mean * 2, ++changed;
      }
    rank_filter(g, 2, window);
    if (window > 1) {
      EXPECT_GT(changed, 0u) << window;
    }
    for (std::size_t i = 0; i < g.cells().size(); ++i)
      ASSERT_NEAR(g.cells()[i], expected.cells()[i], 1e-13 * expected.cells()[i])
          << "window " << window << " cell " << i;
  }
}

TEST(WeightGrid, GaussianTaperAtTheCellsCoordinates) {
  WeightGrid g(8, 8, 0.01, 0.01);
  g.add(20, 20, 2.0);  // cell (5, 1): u = (5 − 4)·12.5 = 12.5 λ, v = 12.5 λ, not the sample's 20, 20
  const double fwhm = 0.02;
  gaussian_taper(g, fwhm);
  const double sigma = 2 * std::sqrt(2 * std::log(2.0)) / (2 * M_PI * fwhm);
  EXPECT_NEAR(g.lookup(20, 20), 2.0 * std::exp(-(12.5 * 12.5 * 2) / (2 * sigma * sigma)), 1e-15);
  EXPECT_EQ(g.lookup(40, 40), 0.0);
}

}  // namespace
}  // namespace gpuclean::imaging

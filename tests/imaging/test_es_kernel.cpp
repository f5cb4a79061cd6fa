// The ES kernel, its correction and the grid plan (imaging-plan.md §4.1–4.3).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "imaging/es_kernel.hpp"
#include "imaging/grid_plan.hpp"

namespace gpuclean::imaging {
namespace {

TEST(EsKernel, ShapeAndSupport) {
  const EsKernel k = es_kernel(7, 1.5);
  EXPECT_DOUBLE_EQ(k(0), 1.0);
  EXPECT_EQ(k(1), 0.0);
  EXPECT_EQ(k(-1.2), 0.0);
  EXPECT_DOUBLE_EQ(k(0.3), k(-0.3));
  // φ(x) = exp(β W ((1 − x²)^e0 − 1)) with ducc's row (7, 1.50): β = 1.8680822720, e0 = 0.5206277502.
  EXPECT_NEAR(k(0.5), std::exp(1.8680822720 * 7 * (std::pow(0.75, 0.5206277502) - 1)), 1e-15);
  EXPECT_THROW(es_kernel(7, 1.33), std::invalid_argument);
}

// c(s) against the same integral by a fine midpoint rule. ducc's node count leaves about 1e-7 at
// the image edge (the kernel's (1 − x²)^e0 edge is not smooth), far below the 1e-4 aimed at.
TEST(EsKernel, CorrectionIsTheInverseFourierTransform) {
  for (auto [W, sigma] : {std::pair{6, 1.6}, std::pair{7, 1.5}, std::pair{8, 1.25}}) {
    const EsKernel k = es_kernel(W, sigma);
    for (double s : {0.0, 0.1, 0.2, 0.5 / sigma, 0.45}) {
      const int n = 200000;
      double sum = 0;
      for (int i = 0; i < n; ++i) {
        const double y = -1 + (i + 0.5) * 2.0 / n;
        sum += k(y) * std::cos(std::numbers::pi * W * s * y) * 2.0 / n;
      }
      const double expected = 1 / (0.5 * W * sum);
      EXPECT_NEAR(k.correction(s), expected, 3e-7 * expected) << "W " << W << " s " << s;
    }
  }
}

// ducc's choice for ε = 1e-4 with w-stacking (ε/3 a dimension, correction range < 10).
TEST(EsKernel, CandidatesForOneInTenThousand) {
  EXPECT_DOUBLE_EQ(per_dimension_epsilon(1e-4, true), 1e-4 / 3);
  const auto c = es_kernel_candidates(per_dimension_epsilon(1e-4, true));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].support(), 6);
  EXPECT_DOUBLE_EQ(c[0].sigma(), 1.60);
  EXPECT_EQ(c[1].support(), 7);
  EXPECT_DOUBLE_EQ(c[1].sigma(), 1.40);
  EXPECT_EQ(c[2].support(), 8);
  EXPECT_DOUBLE_EQ(c[2].sigma(), 1.50);  // 1.25–1.45 reach ε but amplify the edge by 10–41
}

TEST(GridPlan, SizesAndPlanes) {
  EXPECT_EQ(good_fft_size(97), 98u);
  EXPECT_EQ(good_fft_size(121), 125u);
  const ImageGeometry g{130, 96, 100.0 / 3600 * std::numbers::pi / 180};
  const EsKernel k = es_kernel(7, 1.5);
  const GridPlan p = make_grid_plan(g, k, {1000, 21000});
  EXPECT_EQ(p.nu, 196u);  // 2·good(⌈1.5·130/2⌉ = 98)
  EXPECT_EQ(p.nv, 144u);  // 2·good(72)
  // t spans [−t_max, t_max] over the image: n − 1 at the corner, 0 at the centre pixel.
  const double corner = n_minus_one(pixel_l(g, 0), pixel_m(g, 0));
  EXPECT_NEAR(corner + p.nshift, -p.t_max, 1e-18);
  EXPECT_NEAR(p.nshift, p.t_max, 1e-18);
  EXPECT_NEAR(p.dw, 1 / (2 * 1.5 * p.t_max), 1e-9);
  EXPECT_EQ(p.planes, static_cast<std::size_t>(std::floor(20000 / p.dw + 7)));
  // The extreme samples' W planes lie inside the plan, with their outer kernel zero at most at −1.
  const double h = 3.5;
  EXPECT_GE((1000 - p.w0) / p.dw - h, -1.0);
  EXPECT_LE((21000 - p.w0) / p.dw + h, static_cast<double>(p.planes));
  // Orientation: x grows to the east (l falls), y to the north.
  EXPECT_GT(pixel_l(g, 0), 0);
  EXPECT_EQ(pixel_l(g, 65), 0);
  EXPECT_LT(pixel_m(g, 0), 0);
  EXPECT_THROW(make_grid_plan({4000, 4000, 1e-3}, k, {0, 1}), std::invalid_argument);  // past the horizon
}

TEST(GridPlan, CostModelPrefersFewerPlanesOrFewerKernelPoints) {
  const ImageGeometry g{128, 128, 240.0 / 3600 * std::numbers::pi / 180};
  // Many samples, few planes: the smallest kernel (W = 6) costs least.
  EXPECT_EQ(choose_grid_plan(g, 1e-4, {0, 10}, 100'000'000).kernel.support(), 6);
  // Few samples: the smallest grid and fewest planes (W = 7, σ = 1.4) cost least.
  EXPECT_EQ(choose_grid_plan(g, 1e-4, {0, 30000}, 10).kernel.support(), 7);
}

}  // namespace
}  // namespace gpuclean::imaging

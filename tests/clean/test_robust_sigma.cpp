// clean::robust_sigma is 1.4826 x the MAD of the finite values: the median at rank
// (n_finite - 1) / 2 and the same rank of |x - median| in float, the computation the selection
// library's robust_statistics reproduces on the GPU. Checked against a full sort.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "clean/image_stats.hpp"
#include "data/value_distributions.hpp"

namespace {

double sigma_by_sorting(const std::vector<float>& v) {
  std::vector<float> f;
  for (float x : v)
    if (std::isfinite(x)) f.push_back(x);
  if (f.empty()) return 0.0;
  const std::size_t mid = (f.size() - 1) / 2;
  std::sort(f.begin(), f.end());
  const float median = f[mid];
  for (float& x : f) x = std::abs(x - median);
  std::sort(f.begin(), f.end());
  return 1.4826 * static_cast<double>(f[mid]);
}

}  // namespace

TEST(RobustSigma, IsTheMadOfTheFiniteValues) {
  for (const auto& dist : gpuclean::data::value_distributions()) {
    for (std::size_t n : {1u, 2u, 3u, 1000u, 65537u}) {
      std::vector<float> v(n);
      dist.fill(v, 99 + n);
      EXPECT_EQ(gpuclean::clean::robust_sigma(v), sigma_by_sorting(v)) << dist.name << " n=" << n;
    }
  }
}

TEST(RobustSigma, NonFiniteValuesAreLeftOut) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(gpuclean::clean::robust_sigma(std::vector<float>{}), 0.0);
  EXPECT_EQ(gpuclean::clean::robust_sigma(std::vector<float>{kNaN, kInf, -kInf}), 0.0);
  // Finite values 1 and 3: median (rank 0) 1, deviations 0 and 2, MAD (rank 0) 0.
  EXPECT_EQ(gpuclean::clean::robust_sigma(std::vector<float>{kInf, 1.0f, kNaN, 3.0f}), 0.0);
  // Finite values -2, 1, 4, 10: median 1, deviations 3, 0, 3, 9: MAD (rank 1) 3.
  EXPECT_EQ(gpuclean::clean::robust_sigma(std::vector<float>{10.0f, -kInf, -2.0f, 4.0f, kNaN, 1.0f}), 1.4826 * 3.0);
}

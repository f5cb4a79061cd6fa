// The CPU reference defines the selection semantics; these hand-written cases pin them down.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "select/cpu_reference.hpp"

namespace gs = gpuclean::select;
using gs::Order;

namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<std::uint32_t> indices(const std::vector<float>& v, std::size_t k, Order o, bool sorted = false) {
  return gs::top_k_cpu(v, {k, o, sorted}).indices;
}
}  // namespace

TEST(SelectCpuReference, LargestAbsPicksMagnitudes) {
  const std::vector<float> v = {0.5f, -3.0f, 2.0f, -0.1f, 2.5f};
  EXPECT_EQ(indices(v, 2, Order::kLargestAbs), (std::vector<std::uint32_t>{1, 4}));
  const auto top = gs::top_k_cpu(v, {2, Order::kLargestAbs, false});
  EXPECT_EQ(top.values, (std::vector<float>{-3.0f, 2.5f}));  // sign kept
}

TEST(SelectCpuReference, TiesGoToLowestIndices) {
  const std::vector<float> v = {1, 5, 3, 5, 5, 2, 5};
  EXPECT_EQ(indices(v, 2, Order::kLargest), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(indices(v, 5, Order::kLargest), (std::vector<std::uint32_t>{1, 2, 3, 4, 6}));
  // |-5| ties with 5: the lower index wins whatever the sign.
  const std::vector<float> w = {-5, 5, -5};
  EXPECT_EQ(indices(w, 2, Order::kLargestAbs), (std::vector<std::uint32_t>{0, 1}));
}

TEST(SelectCpuReference, SmallestOrder) {
  const std::vector<float> v = {4, -1, 7, -1, 0};
  EXPECT_EQ(indices(v, 2, Order::kSmallest), (std::vector<std::uint32_t>{1, 3}));
}

TEST(SelectCpuReference, NaNIsNeverSelected) {
  const std::vector<float> v = {kNaN, 1.0f, kNaN, -2.0f};
  EXPECT_EQ(indices(v, 4, Order::kLargestAbs), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(indices(v, 1, Order::kLargest), (std::vector<std::uint32_t>{1}));
}

TEST(SelectCpuReference, SignedZerosAreEqualKeys) {
  const std::vector<float> v = {-0.0f, 0.0f, -0.0f};
  EXPECT_EQ(indices(v, 2, Order::kLargest), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(indices(v, 2, Order::kSmallest), (std::vector<std::uint32_t>{0, 1}));
}

TEST(SelectCpuReference, InfinitiesRankAtTheEnds) {
  const std::vector<float> v = {1, -kInf, kInf, 2};
  EXPECT_EQ(indices(v, 1, Order::kLargest), (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(indices(v, 1, Order::kSmallest), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(indices(v, 2, Order::kLargestAbs), (std::vector<std::uint32_t>{1, 2}));
}

TEST(SelectCpuReference, EdgeSizes) {
  EXPECT_TRUE(indices({}, 0, Order::kLargest).empty());
  EXPECT_TRUE(indices({1, 2}, 0, Order::kLargest).empty());
  EXPECT_EQ(indices({7}, 1, Order::kLargest), (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(indices({3, 1, 2}, 3, Order::kLargest), (std::vector<std::uint32_t>{0, 1, 2}));
}

// k above n cannot be met: refused, never answered with fewer. k = n takes everything; k above
// the non-NaN count only (n_valid < k <= n) returns the n_valid elements, as documented.
TEST(SelectCpuReference, KAboveNIsRefused) {
  const std::vector<float> v = {3, 1, 2};
  for (std::size_t k : {4u, 10u}) {
    try {
      gs::top_k_cpu(v, {k, Order::kLargest, false});
      ADD_FAILURE() << "k = " << k << " > n = 3 was taken";
    } catch (const gs::InvalidRequest& e) {
      EXPECT_NE(std::string(e.what()).find("k = " + std::to_string(k)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("give k <= 3"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(gs::top_k_cpu({}, {1, Order::kLargest, false}), std::invalid_argument);  // a usage error
  EXPECT_THROW(gs::check_top_k(5, {6, Order::kLargestAbs, true}), gs::InvalidRequest);
  EXPECT_NO_THROW(gs::check_top_k(5, {5, Order::kLargestAbs, true}));
  EXPECT_EQ(indices(v, 3, Order::kLargest, true), (std::vector<std::uint32_t>{0, 2, 1}));
  EXPECT_EQ(indices({kNaN, 1, kNaN}, 3, Order::kLargest), (std::vector<std::uint32_t>{1}));
}

TEST(SelectCpuReference, SortedOutputIsBestFirst) {
  const std::vector<float> v = {1, 9, 3, 9, -10};
  EXPECT_EQ(indices(v, 4, Order::kLargestAbs, true), (std::vector<std::uint32_t>{4, 1, 3, 2}));
}

TEST(SelectCpuReference, KthKeyAndOrderStatistics) {
  const std::vector<float> v = {5, kNaN, 1, 4, 2, 3};
  EXPECT_EQ(gs::kth_key_cpu(v, 1, Order::kLargest), 5.0f);
  EXPECT_EQ(gs::kth_key_cpu(v, 5, Order::kLargest), 1.0f);
  EXPECT_TRUE(std::isnan(gs::kth_key_cpu(v, 6, Order::kLargest)));
  EXPECT_TRUE(std::isnan(gs::kth_key_cpu(v, 0, Order::kLargest)));
  EXPECT_EQ(gs::order_statistic_cpu(v, 0), 1.0f);
  EXPECT_EQ(gs::order_statistic_cpu(v, 2), 3.0f);
  const std::vector<std::size_t> ranks = {4, 0, 2, 2, 9};
  const auto m = gs::multiselect_cpu(v, ranks);
  EXPECT_EQ(m[0], 5.0f);
  EXPECT_EQ(m[1], 1.0f);
  EXPECT_EQ(m[2], 3.0f);
  EXPECT_EQ(m[3], 3.0f);
  EXPECT_TRUE(std::isnan(m[4]));
}

TEST(SelectCpuReference, CountAbove) {
  const std::vector<float> v = {-3, 1, kNaN, 2, -0.5f};
  EXPECT_EQ(gs::count_keys_above_cpu(v, 1.0f, Order::kLargestAbs), 2u);
  EXPECT_EQ(gs::count_keys_above_cpu(v, 1.0f, Order::kLargest), 1u);
}

TEST(SelectCpuReference, MatchesFullSortOnRandomData) {
  std::vector<float> v(5000);
  std::uint32_t s = 12345;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>(s >> 20) % 200 - 100);  // many duplicates
  }
  for (std::size_t k : {1u, 17u, 2500u, 4999u}) {
    std::vector<std::uint32_t> order(v.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return std::abs(v[a]) > std::abs(v[b]); });
    std::vector<std::uint32_t> want(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
    std::sort(want.begin(), want.end());
    EXPECT_EQ(indices(v, k, Order::kLargestAbs), want) << "k=" << k;
  }
}

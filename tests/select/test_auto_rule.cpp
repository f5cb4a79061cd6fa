// The `auto` backend's rule table (select/backends/auto_rule.hpp) and its data classes, on the
// CPU: every row reachable, every name a real exact backend, the look only where it can change
// the choice, and the sample's class right on every test distribution.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "data/value_distributions.hpp"
#include "select/backends/auto_rule.hpp"
#include "select/detail/rank_key.hpp"
#include "select/registry.hpp"

namespace gs = gpuclean::select;
namespace gd = gpuclean::data;

namespace {

constexpr gs::AutoOperation kOperations[] = {gs::AutoOperation::kTopK, gs::AutoOperation::kOrderStatistic,
                                             gs::AutoOperation::kOrderStatistics,
                                             gs::AutoOperation::kRobustStatistics};

std::vector<std::size_t> probe_ks() { return {0, 1, 1024, 20050, 65536, 65537, std::size_t{1} << 22}; }

}  // namespace

TEST(AutoRule, EveryRowNamesAnExactGpuBackend) {
  const auto& reg = gs::builtin_registry();
  for (const gs::AutoRule& r : gs::kAutoRules) {
    for (std::string_view name : {r.continuous, r.repeated}) {
      SCOPED_TRACE(std::string(name));
      ASSERT_TRUE(reg.contains(name));
      EXPECT_NE(name, "auto");
      EXPECT_NE(name, "cpu");
      EXPECT_TRUE(reg.make(name)->exact());
    }
  }
}

TEST(AutoRule, EveryOperationHasACatchAllAndEveryRowIsReachable) {
  std::set<const gs::AutoRule*> reached;
  for (gs::AutoOperation op : kOperations) {
    const gs::AutoRule* last = nullptr;
    for (const gs::AutoRule& r : gs::kAutoRules)
      if (r.operation == op) last = &r;
    ASSERT_NE(last, nullptr) << gs::to_string(op);
    EXPECT_EQ(last->max_log2_n, gs::kAnyN) << gs::to_string(op);
    EXPECT_EQ(last->max_k, gs::kAnyK) << gs::to_string(op);
    for (int lg = 0; lg <= 34; ++lg) {
      for (std::size_t n : {(std::size_t{1} << lg) - (lg > 0 ? 1 : 0), std::size_t{1} << lg, (std::size_t{1} << lg) + 1}) {
        for (std::size_t k : probe_ks()) {
          const gs::AutoRule& r = gs::auto_rule(op, n, k);
          EXPECT_EQ(r.operation, op);
          reached.insert(&r);
        }
      }
    }
  }
  for (const gs::AutoRule& r : gs::kAutoRules)
    EXPECT_TRUE(reached.count(&r)) << "unreachable row: " << gs::to_string(r.operation) << " max_log2_n=" << r.max_log2_n;
}

TEST(AutoRule, LooksAtTheDataOnlyWhereItCanChangeTheChoice) {
  for (gs::AutoOperation op : kOperations) {
    for (int lg = 0; lg <= 34; ++lg) {
      const std::size_t n = std::size_t{1} << lg;
      for (std::size_t k : probe_ks()) {
        const std::string_view c = gs::auto_choice(op, n, k, gs::DataClass::kContinuous);
        const std::string_view r = gs::auto_choice(op, n, k, gs::DataClass::kRepeated);
        if (!gs::auto_needs_look(op, n, k)) {
          EXPECT_EQ(c, r) << gs::to_string(op) << " n=2^" << lg << " k=" << k;
        } else {
          EXPECT_GE(lg, gs::kLookMinLog2N);
          EXPECT_NE(c, r);
        }
        EXPECT_EQ(c, gs::auto_rule(op, n, k).continuous);
      }
    }
  }
  // Below the look size the continuous column answers, whatever the data.
  EXPECT_FALSE(gs::auto_needs_look(gs::AutoOperation::kTopK, (std::size_t{1} << gs::kLookMinLog2N) - 1, 1024));
}

TEST(AutoRule, SampleClasses) {
  std::vector<std::uint32_t> keys(gs::kLookSamples);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::uint32_t>(i * 7919u);
  EXPECT_EQ(gs::classify_sample(keys), gs::DataClass::kContinuous);
  // A few repeats (under 1 in 64) stay continuous; more are repeated.
  for (std::size_t i = 0; i < 4; ++i) keys[i] = keys[100];
  EXPECT_EQ(gs::classify_sample(keys), gs::DataClass::kContinuous);
  for (std::size_t i = 0; i < 16; ++i) keys[i] = keys[100];
  EXPECT_EQ(gs::classify_sample(keys), gs::DataClass::kRepeated);
  // NaN keys are not repeats of each other.
  for (std::size_t i = 0; i < 100; ++i) keys[i] = 0xFFFFFFFFu;
  for (std::size_t i = 100; i < keys.size(); ++i) keys[i] = static_cast<std::uint32_t>(i);
  EXPECT_EQ(gs::classify_sample(keys), gs::DataClass::kContinuous);
  EXPECT_EQ(gs::classify_sample(std::vector<std::uint32_t>(7, 0xFFFFFFFFu)), gs::DataClass::kContinuous);
  EXPECT_EQ(gs::classify_sample(std::vector<std::uint32_t>{}), gs::DataClass::kContinuous);
}

// What the look sees on the test distributions: the four whose runs of equal keys defeat the
// randomized window are `repeated` under both key orders, the rest `continuous`.
TEST(AutoRule, DistributionsFallInTheirClass) {
  const std::set<std::string> repeated = {"all_equal", "few_distinct", "narrow", "many_inf"};
  const std::size_t n = std::size_t{1} << 20;
  std::vector<float> h(n);
  for (const auto& dist : gd::value_distributions()) {
    dist.fill(h, 42);
    for (gs::Order order : {gs::Order::kLargestAbs, gs::Order::kSmallest}) {
      std::mt19937_64 rng(7);
      std::vector<std::uint32_t> keys(gs::kLookSamples);
      for (auto& k : keys) k = gs::detail::rank_key(h[rng() % n], gs::detail::key_mode(order));
      const gs::DataClass want = repeated.count(dist.name) ? gs::DataClass::kRepeated : gs::DataClass::kContinuous;
      EXPECT_EQ(gs::classify_sample(keys), want) << dist.name << " " << gs::to_string(order);
    }
  }
}

// Every exact GPU backend (auto included) against the CPU reference: exact set equality under the
// tie rule, order statistics and robust statistics value for value, the input left unchanged.
// Skips without a usable GPU.
//
// Coverage and cost. Each CPU reference is computed once per (case, order, k) and shared by every
// backend; the references of a case are computed in parallel. The sizes 0, 1, 2, 31, 32, 33, 1000
// and 2^20 + 7 run every distribution, every backend, all three orders and k in {0, 1, 2, n - 1,
// n, three random, 1024, 20050}: 2^20 + 7 is already past every backend's direct-sort
// threshold (2^14), so it goes through the sampled, windowed, equality-bucket and fallback paths.
// n = 2^24 is there only for what the small sizes cannot reach:
//  * k = 1, 1024, 20050, 65536 by |x| on every distribution: k up to 65536 makes middle bins and
//    target buckets larger than the one-block sort (4096), so they take the CUB sorts; at 2^24
//    SampleSelect has 1024 buckets and randomized 32 K splitters, and on duplicate-heavy data
//    (all_equal, few_distinct, narrow, many_inf) the runs of equal keys overflow the buffers and
//    exercise the equality-bucket and radix fallbacks at the size they were written for;
//  * k = 1024 by x and k = 20050 by -x: the signed orders at that size (one ascending case);
//  * the median and the 101 percentiles on every distribution: 101 target buckets of about 16 K
//    keys each (SampleSelect's second level runs on them: more than 2^20 keys);
//  * robust_statistics on normal, many_inf, nan_sprinkled and noise_plus_point_sources.
// The CPU backend is left out at 2^24 (it is the reference itself).
//
// Also here: robust_statistics on every distribution up to 2^20 + 7 and on the edge inputs (empty,
// n = 1, all infinite, NaN and +-Inf mixed); fresh random data each run; SampleSelect's second
// level forced on small inputs; its count pass on the tree and on the binary search, aligned and
// misaligned; auto's look and forwarding at 2^26.
//
// H100 estimate, by counting the work (16 host cores; a 2^24 std::nth_element reference is
// 0.1 - 0.2 s on one core, GPU calls are 0.05 - 10 ms):
//  * top-k, sizes 0 - 1000: about 15 K calls of about 0.15 ms: 3 s;
//  * top-k, 2^20 + 7: 13 x 6 backends x 33 queries, about 2.5 ms with the O(k) check: 7 s, and
//    33 references per distribution in parallel: 1 s;
//  * top-k, 2^24: per distribution 6 references in parallel (0.25 s), 36 calls (0.2 s), data and
//    copies (0.1 s): 13 x 0.55 = 7 s;
//  * order statistics: 2^20 + 7, 13 x 0.2 s; 2^24, a 106-rank reference (0.5 s) and 12 calls
//    (cutting-plane about 0.1 s) per distribution: 9 s; small sizes 0.3 s;
//  * robust statistics 4 s, fresh data 3 s, second level 1 s, count pass 4 s, auto at 2^26
//    1.5 s, randomized 0.5 s.
// About 45 s in all (budget: 90 s). The earlier suite computed a 2^24 reference, with a full
// sort of 16 M indices for sorted output, for every backend and every k (715 of them) and did
// not finish in 330 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <limits>
#include <random>
#include <string>

#include "data/value_distributions.hpp"
#include "select/backends/auto_select.hpp"
#include "select/backends/bucketed_select.hpp"
#include "select/backends/randomized_select.hpp"
#include "select/cpu_reference.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/device_info.hpp"
#include "select/registry.hpp"

namespace gs = gpuclean::select;
namespace gd = gpuclean::data;
using gpuclean::cuda::DeviceBuffer;

namespace {

constexpr std::size_t kMid = (std::size_t{1} << 20) + 7;
constexpr std::size_t kBig = std::size_t{1} << 24;

struct Case {
  std::string distribution;
  std::size_t n;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.distribution + "_n" + std::to_string(info.param.n);
}

std::uint64_t seed_of(const Case& c) {
  return std::hash<std::string>{}(c.distribution) ^ (c.n * 0x9E3779B97F4A7C15ull);
}

std::vector<float> download(const float* d, std::size_t n) {
  std::vector<float> h(n);
  if (n) cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  return h;
}

DeviceBuffer<float> upload(const std::vector<float>& h) {
  DeviceBuffer<float> d(h.size(), nullptr);
  if (!h.empty()) cudaMemcpy(d.data(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
  return d;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool timing() { return std::getenv("GPUCLEAN_TEST_TIMING") != nullptr; }

/// Every exact GPU backend, auto included; `cpu` only where asked (it is the reference).
std::vector<std::string> exact_backends(bool with_cpu) {
  std::vector<std::string> out;
  const auto& reg = gs::builtin_registry();
  for (const std::string& name : reg.names())
    if (reg.make(name)->exact() && (with_cpu || name != "cpu")) out.push_back(name);
  return out;
}

struct TopKQuery {
  gs::Order order;
  std::size_t k;
  bool sorted;
};

std::vector<TopKQuery> top_k_queries(std::size_t n, std::uint64_t seed) {
  std::vector<TopKQuery> q;
  if (n >= kBig) {
    for (std::size_t k : {1u, 1024u, 20050u, 65536u}) q.push_back({gs::Order::kLargestAbs, k, k % 2 == 0});
    q.push_back({gs::Order::kLargest, 1024, true});
    q.push_back({gs::Order::kSmallest, 20050, false});
    return q;
  }
  std::vector<std::size_t> ks = {0, 1, 2, n > 0 ? n - 1 : 0, n};  // k > n is refused (KAboveNIsRefused)
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 3 && n > 2; ++i) ks.push_back(rng() % n);
  if (n > 100000) ks.push_back(1024), ks.push_back(20050);
  std::erase_if(ks, [n](std::size_t k) { return k > n; });  // tiny inputs: 1 and 2 may exceed n
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  int j = 0;
  for (gs::Order order : {gs::Order::kLargestAbs, gs::Order::kLargest, gs::Order::kSmallest}) {
    for (std::size_t k : ks) q.push_back({order, k, j++ % 2 == 1});  // sorted and unsorted output alternate
    ++j;  // so that each k is sorted under one order and unsorted under another
  }
  return q;
}

/// The CPU references of all queries, computed in parallel (in index order: unsorted).
std::vector<gs::TopK> references(const std::vector<float>& h, const std::vector<TopKQuery>& queries) {
  std::vector<std::future<gs::TopK>> f;
  const auto policy = h.size() >= (1u << 16) ? std::launch::async : std::launch::deferred;
  for (const TopKQuery& q : queries)
    f.push_back(std::async(policy, [&h, q] { return gs::top_k_cpu(h, {q.k, q.order, false}); }));
  std::vector<gs::TopK> out;
  for (auto& x : f) out.push_back(x.get());
  return out;
}

/// Checks set equality in O(k) with a stamp per element, reused across checks of one input.
class TopKChecker {
 public:
  explicit TopKChecker(const std::vector<float>& h) : h_(h), stamp_(h.size(), 0), out_v_(h.size() + 6, nullptr),
                                                      out_i_(h.size() + 6, nullptr) {}

  void check(const gs::Selector& sel, gs::Workspace& ws, const float* d_in, const TopKQuery& q, const gs::TopK& want) {
    const std::size_t n = h_.size();
    SCOPED_TRACE(std::string(sel.name()) + " k=" + std::to_string(q.k) + " order=" + std::string(gs::to_string(q.order)) +
                 (q.sorted ? " sorted" : " unsorted"));
    const auto t0 = std::chrono::steady_clock::now();
    const gs::SelectStats st = sel.top_k(nullptr, d_in, n, {q.k, q.order, q.sorted}, ws, out_v_.data(), out_i_.data());
    ASSERT_EQ(st.count, want.indices.size());
    std::vector<std::uint32_t> got_i(st.count);
    std::vector<float> got_v(st.count);
    if (st.count) {
      ASSERT_EQ(cudaMemcpy(got_i.data(), out_i_.data(), st.count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got_v.data(), out_v_.data(), st.count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    }
    for (std::size_t j = 0; j < st.count; ++j) {
      ASSERT_LT(got_i[j], n);
      ASSERT_EQ(std::memcmp(&got_v[j], &h_[got_i[j]], 4), 0) << "value does not match its index";
    }
    if (q.sorted) {
      for (std::size_t j = 1; j < st.count; ++j) {
        const float a = gs::select_key(got_v[j - 1], q.order), b = gs::select_key(got_v[j], q.order);
        ASSERT_TRUE(a > b || (a == b && got_i[j - 1] < got_i[j])) << "sorted output out of order at " << j;
      }
    }
    // Every reference index stamped once; each selected index must carry that stamp, and loses it.
    stamp_base_ += 2;
    for (std::uint32_t i : want.indices) stamp_[i] = stamp_base_;
    for (std::uint32_t i : got_i) {
      ASSERT_EQ(stamp_[i], stamp_base_) << "index " << i << " is not in the reference set (or selected twice)";
      stamp_[i] = stamp_base_ + 1;
    }
    EXPECT_LE(st.scratch_bytes, sel.top_k_workspace_bytes(n, q.k));
    if (timing())
      std::printf("%s k=%zu %.1f ms (gpu+check)\n", std::string(sel.name()).c_str(), q.k,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }

 private:
  const std::vector<float>& h_;
  std::vector<std::uint32_t> stamp_;
  std::uint32_t stamp_base_ = 0;
  DeviceBuffer<float> out_v_;
  DeviceBuffer<std::uint32_t> out_i_;
};

void expect_same_values(const std::vector<float>& got, const std::vector<float>& want,
                        const std::vector<std::size_t>& ranks) {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "rank " << ranks[i] << ": " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << "rank " << ranks[i];
    }
  }
}

/// The robust statistics as clean::robust_sigma computes them on the CPU.
gs::RobustStats robust_cpu(const std::vector<float>& h) {
  gs::RobustStats r;
  std::vector<float> finite;
  for (float v : h)
    if (std::isfinite(v)) finite.push_back(v);
  r.n_finite = finite.size();
  if (finite.empty()) return r;
  const std::size_t mid = (finite.size() - 1) / 2;
  r.median = gs::order_statistic_cpu(finite, mid);
  for (float& v : finite) v = std::abs(v - r.median);
  r.mad = gs::order_statistic_cpu(finite, mid);
  return r;
}

void expect_same_robust(const gs::RobustStats& got, const gs::RobustStats& want) {
  EXPECT_EQ(got.n_finite, want.n_finite);
  if (std::isnan(want.median)) {
    EXPECT_TRUE(std::isnan(got.median)) << got.median;
    EXPECT_TRUE(std::isnan(got.mad)) << got.mad;
  } else {
    EXPECT_EQ(got.median, want.median);
    EXPECT_EQ(got.mad, want.mad);
  }
}

void check_robust(const std::vector<float>& h, bool with_cpu) {
  const DeviceBuffer<float> d = upload(h);
  const gs::RobustStats want = robust_cpu(h);
  for (const std::string& name : exact_backends(with_cpu)) {
    SCOPED_TRACE(name + " n=" + std::to_string(h.size()));
    const auto sel = gs::builtin_registry().make(name);
    gs::Workspace ws;
    gs::SelectStats st;
    expect_same_robust(sel->robust_statistics(nullptr, d.data(), h.size(), ws, &st), want);
    EXPECT_LE(st.scratch_bytes, sel->robust_statistics_workspace_bytes(h.size()));
  }
  EXPECT_TRUE(same_bits(download(d.data(), h.size()), h)) << "the input was modified";
}

class SelectorProperties : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  }
};

}  // namespace

TEST_P(SelectorProperties, TopKMatchesTheReferenceExactly) {
  const Case c = GetParam();
  std::vector<float> h(c.n);
  gd::value_distribution(c.distribution).fill(h, seed_of(c));
  const DeviceBuffer<float> d = upload(h);
  const std::vector<TopKQuery> queries = top_k_queries(c.n, seed_of(c));
  const std::vector<gs::TopK> want = references(h, queries);
  TopKChecker checker(h);
  for (const std::string& name : exact_backends(false)) {
    const auto sel = gs::builtin_registry().make(name);
    gs::Workspace ws;
    for (std::size_t i = 0; i < queries.size(); ++i) {
      checker.check(*sel, ws, d.data(), queries[i], want[i]);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_TRUE(same_bits(download(d.data(), c.n), h)) << "the input was modified";
}

TEST_P(SelectorProperties, OrderStatisticsMatchTheReference) {
  const Case c = GetParam();
  std::vector<float> h(c.n);
  gd::value_distribution(c.distribution).fill(h, seed_of(c) + 1);
  const DeviceBuffer<float> d = upload(h);
  std::size_t valid = 0;
  for (float v : h) valid += !std::isnan(v);
  std::vector<std::size_t> ranks = {0, valid / 2, valid > 0 ? valid - 1 : 0, valid, c.n + 3};
  if (valid >= 1000)
    for (int q = 0; q <= 100; ++q) ranks.push_back(static_cast<std::size_t>(q / 100.0 * static_cast<double>(valid - 1)));
  const std::vector<float> want = gs::multiselect_cpu(h, ranks);
  for (const std::string& name : exact_backends(c.n < kBig)) {
    const auto sel = gs::builtin_registry().make(name);
    SCOPED_TRACE(name);
    gs::Workspace ws;
    std::vector<float> got(ranks.size());
    const gs::SelectStats st = sel->order_statistics(nullptr, d.data(), c.n, ranks, ws, got.data());
    expect_same_values(got, want, ranks);
    EXPECT_LE(st.scratch_bytes, sel->order_statistics_workspace_bytes(c.n, ranks.size()));
    // The single k-th order statistic (the median) through the same call.
    float median = 0.0f;
    sel->order_statistics(nullptr, d.data(), c.n, {valid / 2}, ws, &median);
    if (valid) {
      EXPECT_EQ(median, want[1]);
    } else {
      EXPECT_TRUE(std::isnan(median));
    }
  }
  EXPECT_TRUE(same_bits(download(d.data(), c.n), h)) << "the input was modified";
}

namespace {
std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const auto& dist : gd::value_distributions())
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{32},
                          std::size_t{33}, std::size_t{1000}, kMid, kBig})
      out.push_back({dist.name, n});
  return out;
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(Backends, SelectorProperties, ::testing::ValuesIn(all_cases()), case_name);

// robust_statistics: the median of the finite values at rank (n_finite - 1) / 2 and the same rank
// of |x - median| in float, exactly as the CPU computes them.
class RobustStatistics : public SelectorProperties {};

TEST_P(RobustStatistics, MatchTheCpuComputation) {
  const Case c = GetParam();
  std::vector<float> h(c.n);
  gd::value_distribution(c.distribution).fill(h, seed_of(c) + 2);
  check_robust(h, c.n < kBig);
}

namespace {
std::vector<Case> robust_cases() {
  std::vector<Case> out;
  for (const auto& dist : gd::value_distributions())
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{1000}, kMid})
      out.push_back({dist.name, n});
  for (const char* dist : {"normal", "many_inf", "nan_sprinkled", "noise_plus_point_sources"}) out.push_back({dist, kBig});
  return out;
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(Backends, RobustStatistics, ::testing::ValuesIn(robust_cases()), case_name);

TEST(RobustStatisticsEdges, NonFiniteValuesAreLeftOut) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<std::vector<float>> inputs = {
      {},
      {2.5f},
      {kNaN},
      {kInf},
      {-kInf, kInf, kNaN, kInf},          // nothing finite
      {kInf, 1.0f, -kInf, kNaN, 3.0f},    // two finite values: median 1, deviations 0 and 2
      {-0.0f, 0.0f, -0.0f},
      {5.0f, kNaN, -3.0f, kInf, 5.0f, 5.0f, -kInf, 1e30f, -1e30f},
  };
  for (const auto& h : inputs) {
    check_robust(h, true);
    if (HasFatalFailure()) return;
  }
  // Many infinities around a few finite values, at a size past the direct sorts.
  std::vector<float> h(200000, kInf);
  for (std::size_t i = 0; i < h.size(); i += 3) h[i] = -kInf;
  for (std::size_t i = 0; i < h.size(); i += 101) h[i] = static_cast<float>(i % 17) - 8.0f;
  for (std::size_t i = 1; i < h.size(); i += 997) h[i] = kNaN;
  check_robust(h, true);
}

// Fresh data on every run: a new seed each time (printed; GPUCLEAN_TEST_SEED=S reproduces a run),
// three random sizes per distribution, random orders, k, ranks and output order, every backend.
TEST(SelectorFreshData, EveryBackendMatchesTheReference) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  std::uint64_t seed = 0;
  if (const char* s = std::getenv("GPUCLEAN_TEST_SEED")) {
    seed = std::strtoull(s, nullptr, 0);
  } else {
    std::random_device rd;
    seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  std::printf("fresh data seed %llu (GPUCLEAN_TEST_SEED=%llu reproduces this run)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  SCOPED_TRACE("GPUCLEAN_TEST_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](std::size_t lo, std::size_t hi) { return lo + rng() % (hi - lo + 1); };
  const std::vector<std::string> backends = exact_backends(false);
  for (const auto& dist : gd::value_distributions()) {
    for (const auto& [lo, hi] : {std::pair{std::size_t{1}, std::size_t{4096}},
                                 std::pair{std::size_t{4097}, std::size_t{1} << 17},
                                 std::pair{std::size_t{1} << 19, std::size_t{1} << 21}}) {
      const std::size_t n = uniform(lo, hi);
      std::vector<float> h(n);
      dist.fill(h, rng());
      SCOPED_TRACE(dist.name + " n=" + std::to_string(n));
      const DeviceBuffer<float> d = upload(h);
      std::vector<TopKQuery> queries;
      for (int i = 0; i < 3; ++i) {
        const gs::Order order = static_cast<gs::Order>(rng() % 3);
        const std::size_t k = i == 0 ? uniform(1, std::min<std::size_t>(n, 64)) : i == 1 ? uniform(0, std::min<std::size_t>(n, 65536)) : uniform(0, n);
        queries.push_back({order, k, rng() % 2 == 0});
      }
      const std::vector<gs::TopK> want = references(h, queries);
      std::size_t valid = 0;
      for (float v : h) valid += !std::isnan(v);
      std::vector<std::size_t> ranks = {valid / 2};
      for (int i = 0; i < 4; ++i) ranks.push_back(uniform(0, valid + 1));
      const std::vector<float> want_ranks = gs::multiselect_cpu(h, ranks);
      const gs::RobustStats want_robust = robust_cpu(h);
      TopKChecker checker(h);
      for (const std::string& name : backends) {
        const auto sel = gs::builtin_registry().make(name);
        gs::Workspace ws;
        for (std::size_t i = 0; i < queries.size(); ++i) {
          checker.check(*sel, ws, d.data(), queries[i], want[i]);
          if (HasFatalFailure()) return;
        }
        SCOPED_TRACE(name);
        std::vector<float> got(ranks.size());
        sel->order_statistics(nullptr, d.data(), n, ranks, ws, got.data());
        expect_same_values(got, want_ranks, ranks);
        expect_same_robust(sel->robust_statistics(nullptr, d.data(), n, ws), want_robust);
      }
      EXPECT_TRUE(same_bits(download(d.data(), n), h)) << "the input was modified";
    }
  }
}

// SampleSelect's second level (a SampleSelect of the target buckets' keys) forced on at sizes
// where the rule would sort the target buckets whole, on every distribution.
TEST(SampleSecondLevel, PercentilesMatchTheReferenceOnEveryDistribution) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  gs::SampleTuning t;
  t.second_level_min = 0;
  const auto sel = gs::make_sample_selector(t);
  for (const auto& dist : gd::value_distributions()) {
    for (std::size_t n : {std::size_t{20000}, kMid}) {
      SCOPED_TRACE(dist.name + " n=" + std::to_string(n));
      std::vector<float> h(n);
      dist.fill(h, 0x5EC0 + n);
      const DeviceBuffer<float> d = upload(h);
      std::size_t valid = 0;
      for (float v : h) valid += !std::isnan(v);
      std::vector<std::size_t> ranks = {valid / 2, valid, n + 3};
      for (int q = 0; q <= 100; ++q) ranks.push_back(static_cast<std::size_t>(q / 100.0 * static_cast<double>(valid - 1)));
      for (std::size_t r = 0; r < 40 && r < valid; ++r) ranks.push_back(valid / 3 + r);  // neighbours share buckets
      const std::vector<float> want = gs::multiselect_cpu(h, ranks);
      gs::Workspace ws;
      std::vector<float> got(ranks.size());
      const gs::SelectStats st = sel->order_statistics(nullptr, d.data(), n, ranks, ws, got.data());
      expect_same_values(got, want, ranks);
      EXPECT_LE(st.scratch_bytes, sel->order_statistics_workspace_bytes(n, ranks.size()));
    }
  }
}

// SampleSelect's count pass over the Eytzinger tree (the default) and over the engine's binary
// search (the earlier path), on aligned input (float4 loop) and on input one element off
// alignment (the scalar loop): top-k in all three orders and order statistics, on every
// distribution, against the reference.
TEST(SampleCountPass, TreeAndBinarySearchMatchTheReference) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  for (const auto& dist : gd::value_distributions()) {
    std::vector<float> all(kMid + 1);
    dist.fill(all, 0xC0DE);
    const DeviceBuffer<float> d = upload(all);
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const std::vector<float> h(all.begin() + static_cast<std::ptrdiff_t>(offset), all.end());
      const float* d_in = d.data() + offset;
      const std::size_t n = h.size();
      std::vector<TopKQuery> queries;
      for (gs::Order order : {gs::Order::kLargestAbs, gs::Order::kLargest, gs::Order::kSmallest})
        for (std::size_t k : {std::size_t{1}, std::size_t{5000}, n / 3}) queries.push_back({order, k, false});
      const std::vector<gs::TopK> want = references(h, queries);
      std::size_t valid = 0;
      for (float v : h) valid += !std::isnan(v);
      std::vector<std::size_t> ranks = {valid / 2};
      for (int q = 0; q <= 100; q += 10) ranks.push_back(static_cast<std::size_t>(q / 100.0 * static_cast<double>(valid - 1)));
      const std::vector<float> want_ranks = gs::multiselect_cpu(h, ranks);
      TopKChecker checker(h);
      for (bool tree : {true, false}) {
        SCOPED_TRACE(dist.name + (tree ? " tree" : " binary search") + " offset " + std::to_string(offset));
        gs::SampleTuning t;
        t.tree_count = tree;
        const auto sel = gs::make_sample_selector(t);
        gs::Workspace ws;
        for (std::size_t i = 0; i < queries.size(); ++i) {
          checker.check(*sel, ws, d_in, queries[i], want[i]);
          if (HasFatalFailure()) return;
        }
        std::vector<float> got(ranks.size());
        sel->order_statistics(nullptr, d_in, n, ranks, ws, got.data());
        expect_same_values(got, want_ranks, ranks);
      }
    }
  }
}

// auto forwards each call to its rule's choice. At the look size, narrow data goes to the rule's
// `repeated` column and normal data to its `continuous` one, and what auto returns is what that
// backend returns (both exact, so no CPU reference is needed at 2^26).
TEST(AutoBackend, LooksAtLargeInputsAndForwardsToTheRulesChoice) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  const std::size_t n = std::size_t{1} << gs::kLookMinLog2N;
  const auto& reg = gs::builtin_registry();
  const auto automatic = reg.make("auto");
  std::vector<float> h(n);
  for (const char* dist : {"normal", "narrow"}) {
    SCOPED_TRACE(dist);
    gd::value_distribution(dist).fill(h, 5);
    const DeviceBuffer<float> d = upload(h);
    const gs::DataClass want = std::string(dist) == "narrow" ? gs::DataClass::kRepeated : gs::DataClass::kContinuous;
    gs::Workspace ws;
    EXPECT_EQ(gs::sample_data_class(nullptr, d.data(), n, gs::Order::kLargestAbs, ws), want);
    EXPECT_EQ(gs::sample_data_class(nullptr, d.data(), n, gs::Order::kSmallest, ws), want);
    for (const auto& [op, k] : {std::pair{gs::AutoOperation::kTopK, std::size_t{1024}},
                                std::pair{gs::AutoOperation::kOrderStatistic, std::size_t{1}},
                                std::pair{gs::AutoOperation::kOrderStatistics, std::size_t{101}},
                                std::pair{gs::AutoOperation::kRobustStatistics, std::size_t{1}}}) {
      const gs::Order order = op == gs::AutoOperation::kTopK ? gs::Order::kLargestAbs : gs::Order::kSmallest;
      EXPECT_EQ(gs::auto_backend_for(nullptr, d.data(), n, op, k, order, ws), gs::auto_choice(op, n, k, want))
          << gs::to_string(op);
    }
    // Top-k, sorted: the same arrays from auto and from the backend it picks.
    const auto chosen = reg.make(gs::auto_choice(gs::AutoOperation::kTopK, n, 1024, want));
    DeviceBuffer<float> va(1024, nullptr), vb(1024, nullptr);
    DeviceBuffer<std::uint32_t> ia(1024, nullptr), ib(1024, nullptr);
    gs::Workspace wa, wb;
    const gs::SelectRequest req{1024, gs::Order::kLargestAbs, true};
    const auto sa = automatic->top_k(nullptr, d.data(), n, req, wa, va.data(), ia.data());
    const auto sb = chosen->top_k(nullptr, d.data(), n, req, wb, vb.data(), ib.data());
    ASSERT_EQ(sa.count, 1024u);
    ASSERT_EQ(sb.count, 1024u);
    std::vector<std::uint32_t> got_a(1024), got_b(1024);
    cudaMemcpy(got_a.data(), ia.data(), 4096, cudaMemcpyDeviceToHost);
    cudaMemcpy(got_b.data(), ib.data(), 4096, cudaMemcpyDeviceToHost);
    EXPECT_EQ(got_a, got_b);
    // The median and the percentiles.
    std::vector<std::size_t> ranks;
    for (int q = 0; q <= 100; ++q) ranks.push_back(static_cast<std::size_t>(q / 100.0 * static_cast<double>(n - 1)));
    std::vector<float> pa(ranks.size()), pb(ranks.size());
    automatic->order_statistics(nullptr, d.data(), n, ranks, wa, pa.data());
    reg.make(gs::auto_choice(gs::AutoOperation::kOrderStatistics, n, ranks.size(), want))
        ->order_statistics(nullptr, d.data(), n, ranks, wb, pb.data());
    EXPECT_EQ(pa, pb);
    const gs::RobustStats ra = automatic->robust_statistics(nullptr, d.data(), n, wa);
    const gs::RobustStats rb = reg.make(gs::auto_choice(gs::AutoOperation::kRobustStatistics, n, 1, want))
                                   ->robust_statistics(nullptr, d.data(), n, wb);
    EXPECT_EQ(ra.median, rb.median);
    EXPECT_EQ(ra.mad, rb.mad);
    EXPECT_EQ(ra.n_finite, n);
  }
}

TEST(AutoBackend, WorkspaceCoversEveryBackendItMayChoose) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  const auto& reg = gs::builtin_registry();
  const auto automatic = reg.make("auto");
  for (int lg : {0, 10, 20, 24, 26, 28}) {
    const std::size_t n = std::size_t{1} << lg;
    for (gs::DataClass data : {gs::DataClass::kContinuous, gs::DataClass::kRepeated}) {
      SCOPED_TRACE("n=2^" + std::to_string(lg) + " " + std::string(gs::to_string(data)));
      for (std::size_t k : {std::size_t{1}, std::size_t{1024}, std::size_t{65536}, std::size_t{1} << 20}) {
        const auto s = reg.make(gs::auto_choice(gs::AutoOperation::kTopK, n, k, data));
        EXPECT_GE(automatic->top_k_workspace_bytes(n, k), s->top_k_workspace_bytes(n, k)) << "k=" << k;
      }
      for (std::size_t ranks : {std::size_t{1}, std::size_t{101}}) {
        const auto op = ranks == 1 ? gs::AutoOperation::kOrderStatistic : gs::AutoOperation::kOrderStatistics;
        const auto s = reg.make(gs::auto_choice(op, n, ranks, data));
        EXPECT_GE(automatic->order_statistics_workspace_bytes(n, ranks), s->order_statistics_workspace_bytes(n, ranks));
      }
      const auto s = reg.make(gs::auto_choice(gs::AutoOperation::kRobustStatistics, n, 1, data));
      EXPECT_GE(automatic->robust_statistics_workspace_bytes(n), s->robust_statistics_workspace_bytes(n));
    }
  }
}

TEST(RandomizedSelect, LowSuccessProbabilityForcesRetriesAndStaysExact) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  const std::size_t n = (1u << 20) + 7;
  std::vector<float> h(n);
  gd::value_distribution("normal").fill(h, 11);
  DeviceBuffer<float> d(n, nullptr);
  cudaMemcpy(d.data(), h.data(), n * 4, cudaMemcpyHostToDevice);
  gs::RandomizedTuning t;
  t.p_k = 0.05;  // the first window rarely holds the k-th key
  const auto sel = gs::make_randomized_selector(t);
  gs::Workspace ws;
  DeviceBuffer<float> v(20050, nullptr);
  DeviceBuffer<std::uint32_t> idx(20050, nullptr);
  int retries = 0;
  for (std::size_t k : {1u, 77u, 1024u, 5000u, 20050u}) {
    const auto st = sel->top_k(nullptr, d.data(), n, {k, gs::Order::kLargestAbs, false}, ws, v.data(), idx.data());
    retries += st.retries;
    std::vector<std::uint32_t> got(st.count);
    cudaMemcpy(got.data(), idx.data(), st.count * 4, cudaMemcpyDeviceToHost);
    std::sort(got.begin(), got.end());
    auto want = gs::top_k_cpu(h, {k, gs::Order::kLargestAbs, false}).indices;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << "k=" << k;
  }
  EXPECT_GT(retries, 0) << "p_k = 0.05 should make the first window miss";
  // The workspace is sized once for the largest k and then reused.
  EXPECT_LE(ws.allocations(), 5);
}

TEST(RandomizedSelect, PivotWindowHoldsTheExpectedBucket) {
  // k/n = 1/2 with 1000 splitters: the window is centred on bucket ~500 and widens with p_k.
  const auto w90 = gs::binomial_pivot_window(1000000, 500000, 1000, 0.90);
  const auto w99 = gs::binomial_pivot_window(1000000, 500000, 1000, 0.99);
  EXPECT_LE(w90.first, 499);
  EXPECT_GE(w90.last, 500);
  EXPECT_LT(w99.first, w90.first);
  EXPECT_GT(w99.last, w90.last);
  // Binomial(1000, 0.5) has sd 15.8: 90% within about 1.64 sd.
  EXPECT_NEAR(static_cast<double>(w90.last - w90.first), 2 * 1.645 * 15.8, 6.0);
}

// k above n is refused by every backend (Selector::top_k's shared check) before any work: no
// output written, the same InvalidRequest as the CPU reference's. k = n takes every valid element.
TEST(SelectorRequest, KAboveNIsRefusedByEveryBackend) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> h = {3, kNaN, -7, 1, 5};
  const std::size_t n = h.size();
  const DeviceBuffer<float> d = upload(h);
  DeviceBuffer<float> v(n + 1, nullptr);
  DeviceBuffer<std::uint32_t> idx(n + 1, nullptr);
  const std::vector<std::uint32_t> sentinel(n + 1, 0xFFFFFFFFu);
  for (const std::string& name : exact_backends(true)) {
    SCOPED_TRACE(name);
    const auto sel = gs::builtin_registry().make(name);
    gs::Workspace ws;
    ASSERT_EQ(cudaMemcpy(idx.data(), sentinel.data(), (n + 1) * 4, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_THROW(sel->top_k(nullptr, d.data(), n, {n + 1, gs::Order::kLargestAbs, false}, ws, v.data(), idx.data()),
                 gs::InvalidRequest);
    std::vector<std::uint32_t> after(n + 1);
    ASSERT_EQ(cudaMemcpy(after.data(), idx.data(), (n + 1) * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(after, sentinel) << "a refused call wrote output";
    const gs::SelectStats st = sel->top_k(nullptr, d.data(), n, {n, gs::Order::kLargestAbs, false}, ws, v.data(), idx.data());
    EXPECT_EQ(st.count, n - 1);  // every non-NaN element
  }
}

TEST(Registry, NamesAndUnknownName) {
  const auto& reg = gs::builtin_registry();
  for (const char* name : {"auto", "cpu", "sort", "randomized", "sample", "sample-approx", "bucket", "cutting-plane"})
    EXPECT_TRUE(reg.contains(name)) << name;
  EXPECT_TRUE(reg.make("auto")->exact());
  try {
    reg.make("quickselect");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("randomized"), std::string::npos) << e.what();
  }
  for (const auto& name : reg.names()) EXPECT_EQ(reg.make(name)->name(), name);
}

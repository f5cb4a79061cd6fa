// Every exact GPU backend against the CPU reference: exact set equality under the tie rule, for
// every size, k, order and value distribution; order statistics value for value; the input
// left unchanged. Skips without a usable GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <random>

#include "data/value_distributions.hpp"
#include "select/backends/randomized_select.hpp"
#include "select/cpu_reference.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/device_info.hpp"
#include "select/registry.hpp"

namespace gs = gpuclean::select;
namespace gd = gpuclean::data;
using gpuclean::cuda::DeviceBuffer;

namespace {

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

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

std::vector<std::size_t> ks_for(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> ks = {0, 1, 2, n > 0 ? n - 1 : 0, n, n + 5};
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 3 && n > 2; ++i) ks.push_back(rng() % n);
  if (n > 100000) ks.push_back(1024), ks.push_back(20050);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
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
  DeviceBuffer<float> d(c.n, nullptr);
  if (c.n) cudaMemcpy(d.data(), h.data(), c.n * sizeof(float), cudaMemcpyHostToDevice);
  const auto& reg = gs::builtin_registry();
  std::vector<gs::Order> orders = {gs::Order::kLargestAbs};
  if (c.n <= (1u << 20) + 7) orders = {gs::Order::kLargestAbs, gs::Order::kLargest, gs::Order::kSmallest};
  const std::vector<std::size_t> ks = ks_for(c.n, seed_of(c));
  const std::size_t kmax = ks.back();
  DeviceBuffer<float> out_v(kmax + 1, nullptr);
  DeviceBuffer<std::uint32_t> out_i(kmax + 1, nullptr);

  const bool timing = std::getenv("GPUCLEAN_TEST_TIMING") != nullptr;
  for (const std::string& name : reg.names()) {
    const auto sel = reg.make(name);
    if (!sel->exact() || name == "cpu") continue;
    gs::Workspace ws;
    for (gs::Order order : orders) {
      for (std::size_t k : ks) {
        const auto t0 = std::chrono::steady_clock::now();
        SCOPED_TRACE(name + " k=" + std::to_string(k) + " order=" + std::string(gs::to_string(order)));
        const gs::TopK want = gs::top_k_cpu(h, {k, order, false});
        const bool sorted = k % 2 == 1;  // alternate sorted and unsorted output
        const gs::SelectStats st = sel->top_k(nullptr, d.data(), c.n, {k, order, sorted}, ws, out_v.data(), out_i.data());
        ASSERT_EQ(st.count, want.indices.size());
        std::vector<std::uint32_t> got_i(st.count);
        std::vector<float> got_v(st.count);
        if (st.count) {
          cudaMemcpy(got_i.data(), out_i.data(), st.count * 4, cudaMemcpyDeviceToHost);
          cudaMemcpy(got_v.data(), out_v.data(), st.count * 4, cudaMemcpyDeviceToHost);
        }
        for (std::size_t j = 0; j < st.count; ++j) {
          ASSERT_LT(got_i[j], c.n);
          ASSERT_EQ(std::memcmp(&got_v[j], &h[got_i[j]], 4), 0) << "value does not match its index";
        }
        if (sorted) {
          for (std::size_t j = 1; j < st.count; ++j) {
            const float a = gs::select_key(got_v[j - 1], order), b = gs::select_key(got_v[j], order);
            ASSERT_TRUE(a > b || (a == b && got_i[j - 1] < got_i[j])) << "sorted output out of order at " << j;
          }
        }
        // Exact set equality in O(n): every index selected once, and only reference indices.
        std::vector<std::uint8_t> mark(c.n, 0);
        for (std::uint32_t i : want.indices) mark[i] = 1;
        for (std::uint32_t i : got_i) {
          ASSERT_EQ(mark[i], 1) << "index " << i << " is not in the reference set (or selected twice)";
          mark[i] = 2;
        }
        EXPECT_LE(st.scratch_bytes, sel->top_k_workspace_bytes(c.n, k));
        if (timing)
          std::printf("%s k=%zu %.1f ms (gpu+check)\n", name.c_str(), k,
                      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    }
  }
  EXPECT_TRUE(same_bits(download(d.data(), c.n), h)) << "the input was modified";
}

TEST_P(SelectorProperties, OrderStatisticsMatchTheReference) {
  const Case c = GetParam();
  std::vector<float> h(c.n);
  gd::value_distribution(c.distribution).fill(h, seed_of(c) + 1);
  DeviceBuffer<float> d(c.n, nullptr);
  if (c.n) cudaMemcpy(d.data(), h.data(), c.n * sizeof(float), cudaMemcpyHostToDevice);
  std::size_t valid = 0;
  for (float v : h) valid += !std::isnan(v);
  std::vector<std::size_t> ranks = {0, valid / 2, valid > 0 ? valid - 1 : 0, valid, c.n + 3};
  if (valid >= 1000)
    for (int q = 0; q <= 100; ++q) ranks.push_back(static_cast<std::size_t>(q / 100.0 * static_cast<double>(valid - 1)));
  const std::vector<float> want = gs::multiselect_cpu(h, ranks);
  const auto& reg = gs::builtin_registry();
  for (const std::string& name : reg.names()) {
    const auto sel = reg.make(name);
    if (!sel->exact()) continue;
    SCOPED_TRACE(name);
    gs::Workspace ws;
    std::vector<float> got(ranks.size());
    sel->order_statistics(nullptr, d.data(), c.n, ranks, ws, got.data());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "rank " << ranks[i];
      } else {
        EXPECT_EQ(got[i], want[i]) << "rank " << ranks[i];
      }
    }
    // The single k-th order statistic (the median) through the same call.
    float median = 0.0f;
    sel->order_statistics(nullptr, d.data(), c.n, {valid / 2}, ws, &median);
    if (valid) {
      EXPECT_EQ(median, want[1]);
    }
  }
  EXPECT_TRUE(same_bits(download(d.data(), c.n), h)) << "the input was modified";
}

namespace {
std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const auto& dist : gd::value_distributions())
    for (std::size_t n : {0ul, 1ul, 2ul, 31ul, 32ul, 33ul, 1000ul, (1ul << 20) + 7, 1ul << 24}) out.push_back({dist.name, n});
  return out;
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(Backends, SelectorProperties, ::testing::ValuesIn(all_cases()), case_name);

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

TEST(Registry, NamesAndUnknownName) {
  const auto& reg = gs::builtin_registry();
  for (const char* name : {"cpu", "sort", "randomized", "sample", "sample-approx", "bucket", "cutting-plane"})
    EXPECT_TRUE(reg.contains(name)) << name;
  try {
    reg.make("quickselect");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("randomized"), std::string::npos) << e.what();
  }
  for (const auto& name : reg.names()) EXPECT_EQ(reg.make(name)->name(), name);
}

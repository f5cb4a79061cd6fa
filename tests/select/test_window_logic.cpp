// A model of the randomized backend's device chain on the CPU, built from the same decision
// functions as the kernels (select/detail/window_logic.hpp): the sample, the plan, the pass's
// segments and appends (in shuffled order, as atomics leave them), the resolve, the digit bins,
// the selection among candidates and the tie extraction by tiles. Whenever the model's status
// is OK its result must equal the CPU reference exactly; the misses must be rare. The bitwise
// order-statistic searches of the pivot and finish kernels are checked against a sort.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "data/value_distributions.hpp"
#include "select/backends/randomized_select.hpp"
#include "select/cpu_reference.hpp"
#include "select/detail/window_logic.hpp"

namespace gs = gpuclean::select;
namespace gd = gpuclean::data;
using namespace gpuclean::select::detail;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The pivot kernel's search: the largest y with #(keys < y) <= rank, bit by bit below the
// highest bit in which the keys differ.
std::uint32_t bitwise_select32(const std::vector<std::uint32_t>& keys, long long rank) {
  std::uint32_t mn = ~0u, mx = 0;
  for (auto k : keys) mn = std::min(mn, k), mx = std::max(mx, k);
  const int hb = mn == mx ? -1 : 31 - __builtin_clz(mn ^ mx);
  std::uint32_t res = hb < 0 ? mn : static_cast<std::uint32_t>(mn & ~((2ull << hb) - 1ull));
  for (int bit = hb; bit >= 0; --bit) {
    const std::uint32_t c = res | (1u << bit);
    long long cnt = 0;
    for (auto k : keys) cnt += k < c;
    if (cnt <= rank) res = c;
  }
  return res;
}

// The finish kernel's search over distinct 64-bit composites: the need-th smallest (1-based).
std::uint64_t bitwise_select64(const std::vector<std::uint64_t>& c, unsigned need) {
  std::uint64_t mn = ~0ull, mx = 0;
  for (auto x : c) mn = std::min(mn, x), mx = std::max(mx, x);
  const int hb = mn == mx ? -1 : 63 - __builtin_clzll(mn ^ mx);
  std::uint64_t res = hb < 0 ? mn : (mn & ~((2ull << hb) - 1ull));
  for (int bit = hb; bit >= 0; --bit) {
    const std::uint64_t y = res | (1ull << bit);
    unsigned cnt = 0;
    for (auto x : c) cnt += x < y;
    if (cnt + 1 <= need) res = y;
  }
  return res;
}

struct ModelOut {
  std::uint32_t status = kWindowNotRun;
  WindowPlan plan{};
  WindowResolve res{};
  std::vector<std::uint32_t> indices;
};

struct ModelArgs {
  unsigned long long k = 0;
  long long samples = 4096;
  std::uint64_t seed = 0x5EEDC1EA4ull;
  long long first = -1, centre = 0, last = 0;  // host windows
  std::size_t cap_b = 0;
  bool aligned = true;
};

template <WindowKey K>
ModelOut run_model(const std::vector<float>& h, const ModelArgs& a, std::mt19937_64& shuffle_rng) {
  const std::size_t n = h.size();
  auto key_at = [&](std::size_t i) {
    std::uint32_t b;
    std::memcpy(&b, &h[i], 4);
    return window_key<K>(b);
  };
  ModelOut out;
  // pivot
  std::vector<std::uint32_t> sample(static_cast<std::size_t>(a.samples));
  for (std::size_t j = 0; j < sample.size(); ++j) {
    const std::uint64_t hh = mix64(a.seed + 0x9E3779B97F4A7C15ull * (j + 1));
    sample[j] = key_at(static_cast<std::size_t>((static_cast<unsigned __int128>(hh) * n) >> 64));
  }
  const long long sv = std::count_if(sample.begin(), sample.end(), [](std::uint32_t k) { return k != kInvalidKey; });
  std::vector<std::uint32_t> sorted = sample;
  std::sort(sorted.begin(), sorted.end());
  auto at_rank = [&](long long r) { return sorted[static_cast<std::size_t>(std::clamp<long long>(r, 0, a.samples - 1))]; };
  auto below = [&](std::uint32_t k) {
    return static_cast<std::uint32_t>(std::lower_bound(sorted.begin(), sorted.end(), k) - sorted.begin());
  };
  auto equal = [&](std::uint32_t k) {
    return static_cast<std::uint32_t>(std::upper_bound(sorted.begin(), sorted.end(), k) -
                                      std::lower_bound(sorted.begin(), sorted.end(), k));
  };
  PlanInputs in;
  in.samples = a.samples;
  in.first = a.first;
  in.last = a.last;
  in.valid = sv;
  in.key_first = at_rank(a.first < 0 ? 0 : a.first);
  in.key_centre = at_rank(a.centre);
  in.key_last = at_rank(a.last >= a.samples ? 0 : a.last);
  in.below_first = below(in.key_first);
  in.equal_first = equal(in.key_first);
  in.below_centre = below(in.key_centre);
  in.equal_centre = equal(in.key_centre);
  in.below_last = below(in.key_last);
  in.equal_last = equal(in.key_last);
  in.cap_samples = static_cast<float>(static_cast<double>(a.cap_b) * static_cast<double>(a.samples) / static_cast<double>(n));
  in.allow_equality = a.aligned;
  const WindowPlan pl = make_plan(in);
  out.plan = pl;

  // pass
  const std::size_t n_vec = a.aligned ? n / 4 : 0, n_tiles = (n_vec + 127) / 128 + 1;
  const bool tiles = a.aligned;
  std::vector<std::uint32_t> tile_ties(n_tiles, 0);
  std::vector<std::uint64_t> A, B;
  PassCounts pc;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t key = key_at(i);
    const int sg = segment_of(pl, key);
    if (sg >= 4) continue;
    ++pc.seg[sg];
    const std::uint32_t r = region_of(pl, sg);
    if (r == 1) A.push_back(composite(key, static_cast<std::uint32_t>(i)));
    if (r == 2) {
      B.push_back(composite(key, static_cast<std::uint32_t>(i)));
      pc.b_min_inv = std::max(pc.b_min_inv, ~key);
      pc.b_max = std::max(pc.b_max, key);
    }
    if (tiles && pl.equality && sg == 2) ++tile_ties[i < 4 * n_vec ? i / 512 : n_tiles - 1];
  }
  pc.fill_b = B.size();  // the kernel's fill ends above the capacity when B overflows, as here
  std::shuffle(A.begin(), A.end(), shuffle_rng);
  std::shuffle(B.begin(), B.end(), shuffle_rng);
  if (B.size() > a.cap_b) B.resize(a.cap_b);

  // resolve
  const int ib = index_bits_for(n);
  WindowResolve r = resolve_counts(a.k, a.k, a.cap_b, tiles, ib, pl, pc);  // A holds k
  if (r.status == kWindowOk && r.select_b) {
    const int shift = std::max(0, r.total_bits - kWindowDigitBits);
    std::vector<unsigned long long> hist(kWindowBins, 0);
    for (auto c : B) {
      const auto d = rel_of(c, r.b_lo, ib) >> shift;
      EXPECT_LT(d, static_cast<unsigned long long>(kWindowBins)) << "digit out of range";
      ++hist[std::min<unsigned long long>(d, kWindowBins - 1)];
    }
    unsigned long long before = 0;
    for (int b = 0; b < kWindowBins; ++b) {
      if (before < r.need_b && r.need_b <= before + hist[b]) {
        r.prefix = b;
        r.below = before;
        r.cand = hist[b];
        r.need_c = r.need_b - before;
      }
      before += hist[b];
    }
    r.shift = shift;
    if (r.cand > kWindowMaxCandidates) r.status = kWindowCandidates;
  }
  out.res = r;
  out.status = r.status;
  if (r.status != kWindowOk) return out;

  // finish
  std::vector<std::uint64_t> emitted(A.begin(), A.end());
  if (r.emit_all_b) emitted.insert(emitted.end(), B.begin(), B.end());
  if (r.select_b) {
    std::vector<std::uint64_t> cand;
    for (auto c : B) {
      const auto p = rel_of(c, r.b_lo, ib) >> r.shift;
      if (p < r.prefix) emitted.push_back(c);
      if (p == r.prefix) cand.push_back(c);
    }
    EXPECT_EQ(cand.size(), r.cand);
    const std::uint64_t x = bitwise_select64(cand, static_cast<unsigned>(r.need_c));
    for (auto c : cand)
      if (c <= x) emitted.push_back(c);
  }
  if (r.need_v > 0) {  // tiles in index order, offsets by the tiles' counts
    unsigned long long off = 0;
    for (std::size_t t = 0; t < n_tiles && off < r.need_v; ++t) {
      if (tile_ties[t] == 0) continue;
      const std::size_t e0 = t < n_tiles - 1 ? t * 512 : 4 * n_vec;
      const std::size_t e1 = t < n_tiles - 1 ? std::min(e0 + 512, 4 * n_vec) : n;
      for (std::size_t i = e0; i < e1 && off < r.need_v; ++i)
        if (key_at(i) == pl.tie_key) {
          emitted.push_back(composite(pl.tie_key, static_cast<std::uint32_t>(i)));
          ++off;
        }
    }
  }
  EXPECT_EQ(emitted.size(), r.total);
  for (auto c : emitted) out.indices.push_back(composite_index(c));
  return out;
}

// The host side of a top-k chain, as RandomizedSelector sets it up.
ModelArgs topk_args(std::size_t n, std::size_t k) {
  ModelArgs a;
  a.k = k;
  const gs::RandomizedTuning t;
  a.samples = static_cast<long long>(gs::chain_samples(n, t));
  const gs::ChainWindow w = gs::chain_window(n, k, static_cast<std::size_t>(a.samples), t.p_k, t.capacity_factor);
  a.first = w.first;
  a.centre = w.centre;
  a.last = w.last;
  a.cap_b = w.cap_b;
  return a;
}

std::vector<std::uint32_t> sorted_copy(std::vector<std::uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

template <WindowKey K>
ModelOut model_top_k(const std::vector<float>& h, std::size_t k, bool aligned, std::mt19937_64& rng) {
  ModelArgs a = topk_args(h.size(), k);
  a.aligned = aligned;
  return run_model<K>(h, a, rng);
}

ModelOut model_top_k_order(const std::vector<float>& h, std::size_t k, gs::Order order, bool aligned,
                           std::mt19937_64& rng) {
  switch (order) {
    case gs::Order::kLargest: return model_top_k<WindowKey::kLargest>(h, k, aligned, rng);
    case gs::Order::kSmallest: return model_top_k<WindowKey::kSmallest>(h, k, aligned, rng);
    case gs::Order::kLargestAbs: return model_top_k<WindowKey::kLargestAbs>(h, k, aligned, rng);
  }
  return {};
}

std::vector<float> distribution(const std::string& name, std::size_t n, std::uint64_t seed) {
  std::vector<float> h(n);
  gd::value_distribution(name).fill(h, seed);
  return h;
}

}  // namespace

TEST(WindowLogic, BitwiseSelectEqualsSorting) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng() % 300;
    const int kind = trial % 4;
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys)
      k = kind == 0 ? static_cast<std::uint32_t>(rng()) : kind == 1 ? 0x80000000u + static_cast<std::uint32_t>(rng() % 5)
          : kind == 2 ? (rng() % 3 ? kInvalidKey : static_cast<std::uint32_t>(rng()))
                      : 0x3F800000u;
    std::vector<std::uint32_t> s = keys;
    std::sort(s.begin(), s.end());
    for (std::size_t r = 0; r < n; r += 1 + n / 17) EXPECT_EQ(bitwise_select32(keys, static_cast<long long>(r)), s[r]);
    std::vector<std::uint64_t> c(n);
    for (std::size_t i = 0; i < n; ++i) c[i] = composite(keys[i], static_cast<std::uint32_t>(i * 7919 % 100003));
    std::vector<std::uint64_t> cs = c;
    std::sort(cs.begin(), cs.end());
    for (std::size_t r = 1; r <= n; r += 1 + n / 13) EXPECT_EQ(bitwise_select64(c, static_cast<unsigned>(r)), cs[r - 1]);
  }
}

// Every distribution, three orders, the CLEAN's k and the extremes, aligned and not.
TEST(WindowLogic, TopKModelIsExactWheneverItSucceeds) {
  std::mt19937_64 rng(2);
  int calls = 0, misses = 0;
  std::string missed;
  for (std::size_t n : {std::size_t{1} << 18, (std::size_t{1} << 20) + 7}) {
    for (const auto& dist : gd::value_distributions()) {
      const auto h = distribution(dist.name, n, 0x10 + n);
      for (gs::Order order : {gs::Order::kLargestAbs, gs::Order::kLargest, gs::Order::kSmallest}) {
        for (std::size_t k : {std::size_t{1}, std::size_t{1000}, std::size_t{20050}, std::size_t{65536}, n / 3, n - 1}) {
          for (bool aligned : {true, false}) {
            if (!aligned && k != 20050) continue;
            SCOPED_TRACE(dist.name + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " " +
                         std::string(gs::to_string(order)) + (aligned ? "" : " unaligned"));
            const ModelOut m = model_top_k_order(h, k, order, aligned, rng);
            ++calls;
            if (m.status != kWindowOk) {
              ++misses;
              missed += "\n  " + dist.name + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " " +
                        std::string(gs::to_string(order)) + " status " + std::to_string(m.status) +
                        (m.plan.equality ? " (equality)" : "");
              continue;
            }
            const auto want = gs::top_k_cpu(h, {k, order, false}).indices;
            ASSERT_EQ(sorted_copy(m.indices), sorted_copy(want));
          }
        }
      }
    }
  }
  // Unaligned duplicates cannot use equality windows and miss by design; the rest rarely.
  EXPECT_LE(misses, calls / 8) << misses << " of " << calls << missed;
  std::printf("top-k model: %d of %d calls missed%s\n", misses, calls, missed.c_str());
}

TEST(WindowLogic, EqualityWindowsCarryTheDuplicateHeavyData) {
  std::mt19937_64 rng(3);
  for (std::size_t n : {(std::size_t{1} << 20) + 7, std::size_t{1} << 22}) {
    for (const std::string name : {"all_equal", "few_distinct", "many_inf"}) {
      const auto h = distribution(name, n, 0x20 + n);
      for (std::size_t k : {std::size_t{1}, std::size_t{20050}, std::size_t{65536}}) {
        SCOPED_TRACE(name + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        const ModelOut m = model_top_k<WindowKey::kLargestAbs>(h, k, true, rng);
        ASSERT_EQ(m.status, kWindowOk);
        EXPECT_EQ(sorted_copy(m.indices), sorted_copy(gs::top_k_cpu(h, {k, gs::Order::kLargestAbs, false}).indices));
        // few_distinct's runs are about one window wide: a normal window may hold one of them.
        if (name != "few_distinct") {
          EXPECT_EQ(m.plan.equality, 1) << "a run at the target";
        }
      }
    }
  }
}

TEST(WindowLogic, TiesLateInTheInput) {
  std::mt19937_64 rng(4);
  const std::size_t n = (std::size_t{1} << 20) + 3;
  std::vector<float> h(n);
  std::normal_distribution<float> g(0.0f, 0.1f);
  for (std::size_t i = 0; i < n; ++i) h[i] = i < 3 * n / 4 ? g(rng) : 5.0f;
  for (std::size_t k : {std::size_t{1}, std::size_t{20050}, n / 5}) {
    const ModelOut m = model_top_k<WindowKey::kLargest>(h, k, true, rng);
    ASSERT_EQ(m.status, kWindowOk) << k;
    EXPECT_EQ(m.plan.equality, 1);
    EXPECT_EQ(sorted_copy(m.indices), sorted_copy(gs::top_k_cpu(h, {k, gs::Order::kLargest, false}).indices));
  }
}

// The GPU test's adversarial inputs: heavy values next to the target (k on, just past and far
// past their runs), k around the valid count with 40% NaN, and mostly NaN with one heavy value.
TEST(WindowLogic, AdversarialTopKModelsAreExact) {
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<float> g;
  const std::size_t n = (std::size_t{1} << 20) + 3;
  int calls = 0, misses = 0;
  auto check = [&](const std::vector<float>& h, std::size_t k, gs::Order order, const std::string& what) {
    SCOPED_TRACE(what + " k=" + std::to_string(k));
    const ModelOut m = model_top_k_order(h, k, order, true, rng);
    ++calls;
    if (m.status != kWindowOk) {
      ++misses;
      return;
    }
    ASSERT_EQ(sorted_copy(m.indices), sorted_copy(gs::top_k_cpu(h, {k, order, false}).indices));
  };
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 r(seed);
    std::vector<float> h(n);
    for (auto& x : h) {
      const double v = u(r);
      x = v < 0.02 ? 10.0f : v < 0.05 ? 9.0f : static_cast<float>(8.0 * u(r));
    }
    const std::size_t c10 = static_cast<std::size_t>(std::count(h.begin(), h.end(), 10.0f));
    const std::size_t c9 = static_cast<std::size_t>(std::count(h.begin(), h.end(), 9.0f));
    for (std::size_t k : {c10, c10 + 1, c10 + c9 / 2, c10 + c9 - 1, c10 + c9, c10 + c9 + 1, c10 + c9 + 100})
      check(h, k, gs::Order::kLargest, "heavy seed " + std::to_string(seed));
  }
  {
    std::vector<float> h(n);
    for (auto& x : h) x = u(rng) < 0.4 ? kNaN : g(rng);
    const std::size_t valid = static_cast<std::size_t>(std::count_if(h.begin(), h.end(), [](float x) { return !std::isnan(x); }));
    for (std::size_t k : {valid - 1, valid, valid + 1, valid + 5000, n - 1}) check(h, k, gs::Order::kLargest, "40% NaN");
  }
  {
    std::vector<float> h(n);
    for (auto& x : h) {
      const double v = u(rng);
      x = v < 0.7 ? kNaN : v < 0.9 ? 2.5f : g(rng);
    }
    for (std::size_t k : {std::size_t{1}, std::size_t{1000}, std::size_t{20050}, std::size_t{65536}})
      check(h, k, gs::Order::kLargestAbs, "70% NaN, 20% 2.5");
  }
  EXPECT_LE(misses, calls / 5) << misses << " of " << calls;
  std::printf("adversarial model: %d of %d calls missed\n", misses, calls);
}

// A window buffer of ~1% of its expected size overflows on continuous data (the GPU test forces
// the fallback so); an equality window needs no buffer.
TEST(WindowLogic, TinyBufferOverflowsUnlessTheTargetIsAHeavyValue) {
  std::mt19937_64 rng(7);
  const std::size_t n = (std::size_t{1} << 20) + 7;
  for (const std::string name : {"uniform", "normal", "few_distinct"}) {
    const auto h = distribution(name, n, 78);
    for (std::size_t k : {std::size_t{1024}, std::size_t{20050}}) {
      ModelArgs a = topk_args(n, k);
      const gs::RandomizedTuning t;
      a.cap_b = gs::chain_window(n, k, static_cast<std::size_t>(a.samples), t.p_k, 0.01).cap_b;
      const ModelOut m = run_model<WindowKey::kLargestAbs>(h, a, rng);
      if (name == "few_distinct") {
        // k = 1024 lies deep in the top value's run; k = 20050 near the end of the second's,
        // where forcing the window into the tiny buffer may cut the target's run off (a miss).
        if (k == 1024) {
          ASSERT_EQ(m.status, kWindowOk);
          EXPECT_EQ(m.plan.equality, 1);
        }
        if (m.status == kWindowOk) {
          EXPECT_EQ(sorted_copy(m.indices), sorted_copy(gs::top_k_cpu(h, {k, gs::Order::kLargestAbs, false}).indices));
        }
      } else {
        EXPECT_EQ(m.status, kWindowOverflow) << name << " k=" << k;
      }
    }
  }
}

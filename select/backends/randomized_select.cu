#include "select/backends/randomized_select.hpp"

#include <algorithm>
#include <initializer_list>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "select/backends/backends.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/host_flow.hpp"
#include "select/detail/window_select.hpp"

namespace gpuclean::select {
namespace {

using namespace detail;

// Bounds of the window [first, last] over the sorted splitters: elements below splitter[first]
// form the first bin, those in [splitter[first], splitter[last]] the middle bin.
__global__ void window_bounds_kernel(const std::uint32_t* sorted, long long s, long long first, long long last,
                                     std::uint32_t* bounds) {
  const std::uint32_t lo = first < 0 ? 0u : sorted[first];
  const std::uint32_t hi = last >= s ? kInvalidKey - 1 : min(sorted[last], kInvalidKey - 1);
  bounds[0] = lo;
  bounds[1] = hi + 1;  // NaN keys stay above the middle bin
}

std::size_t splitter_count(std::size_t n, double per_sqrt_n) {
  const auto s = static_cast<std::size_t>(std::ceil(per_sqrt_n * std::sqrt(static_cast<double>(n))));
  return std::min(n, std::max<std::size_t>(s, 256));
}

double log_binomial_pmf(std::size_t s, std::size_t i, double p) {
  if (p <= 0.0) return i == 0 ? 0.0 : -INFINITY;
  if (p >= 1.0) return i == s ? 0.0 : -INFINITY;
  const double ds = static_cast<double>(s), di = static_cast<double>(i);
  return std::lgamma(ds + 1) - std::lgamma(di + 1) - std::lgamma(ds - di + 1) + di * std::log(p) +
         (ds - di) * std::log1p(-p);
}

struct Plan : FilterBuffers {
  std::uint32_t *samples, *sorted;
  void* sort_temp;
  std::size_t sort_temp_bytes, s;
};

// ---- the device chain's host side ----

struct ChainBuffers {
  WindowPlan* plan = nullptr;
  WindowCounters* counters = nullptr;
  float* value = nullptr;  // an order statistic's value, for the next chain
  unsigned long long* chunk_ties = nullptr;
  std::uint64_t *cand = nullptr, *buf_a = nullptr, *buf_b = nullptr, *sorted = nullptr;
  std::uint32_t* tiles = nullptr;
  void* sort_temp = nullptr;
  std::size_t sort_temp_bytes = 0;
};

ChainBuffers take_chain(Arena& a, std::size_t n, std::size_t k, std::size_t cap_b, bool ties, bool sorted) {
  ChainBuffers b;
  b.plan = a.take<WindowPlan>(1);
  b.counters = a.take<WindowCounters>(1);
  b.value = a.take<float>(1);
  b.cand = a.take<std::uint64_t>(kWindowMaxCandidates);
  b.buf_a = a.take<std::uint64_t>(k);
  b.buf_b = a.take<std::uint64_t>(cap_b);
  if (ties) {
    b.tiles = a.take<std::uint32_t>(window_tiles(n));
    b.chunk_ties = a.take<unsigned long long>(window_chunks(n));
  }
  if (sorted) {
    b.sorted = a.take<std::uint64_t>(k);
    b.sort_temp_bytes = sort_temp_bytes_u64(k);
    b.sort_temp = a.take<std::byte>(b.sort_temp_bytes);
  }
  return b;
}

// Mapped pinned memory for the chains' results, two per host thread: a call writes and reads
// its own after its one synchronization, and a thread makes one call at a time.
struct MappedResults {
  WindowResult* host = nullptr;
  WindowResult* device = nullptr;
};

MappedResults mapped_results() {
  struct Holder {
    MappedResults r;
    ~Holder() {
      if (r.host) GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeHost(r.host));
    }
  };
  thread_local Holder h;
  if (!h.r.host) {
    void* p = nullptr;
    GPUCLEAN_CUDA_TRY(cudaHostAlloc(&p, 2 * sizeof(WindowResult), cudaHostAllocMapped | cudaHostAllocPortable));
    void* d = nullptr;
    const cudaError_t err = cudaHostGetDevicePointer(&d, p, 0);
    if (err != cudaSuccess) GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeHost(p));
    GPUCLEAN_CUDA_TRY(err);
    h.r.host = static_cast<WindowResult*>(p);
    h.r.device = static_cast<WindowResult*>(d);
  }
  for (int i = 0; i < 2; ++i) h.r.host[i].status = kWindowNotRun;
  return h.r;
}

WindowResult read_result(const WindowResult* r) {
  const volatile WindowResult* v = r;
  WindowResult out;
  out.status = v->status;
  out.key = v->key;
  out.count = v->count;
  out.n_valid = v->n_valid;
  return out;
}

// The two-sided normal quantile: P(|N(0,1)| <= z) = p.
double normal_quantile_two_sided(double p) {
  double lo = 0.0, hi = 40.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (std::erfc(mid / std::sqrt(2.0)) > 1.0 - p) lo = mid; else hi = mid;
  }
  return hi;
}

// The buffer of a window of w sample buckets (see ChainWindow).
std::size_t window_cap(std::size_t n, std::size_t s, double w, double factor, std::size_t extra) {
  const double buckets = 0.5 * factor * (2.0 * w + 4.0 * std::sqrt(w) + 8.0);
  return std::min<std::size_t>(n, static_cast<std::size_t>(buckets * static_cast<double>(n) / static_cast<double>(s + 1)) + extra);
}

// S of the order-statistics chains: 4096, 8192 or 16384.
std::size_t order_samples(const RandomizedTuning& t) {
  return t.chain_order_samples <= 4096 ? 4096 : t.chain_order_samples <= 8192 ? 8192 : 16384;
}

// The robust statistics' window: z sd of Binomial(S, 1/2) and the margins, in sample buckets.
std::size_t robust_cap(std::size_t n, const RandomizedTuning& t) {
  const std::size_t s = order_samples(t);
  const double w = normal_quantile_two_sided(t.p_k) * std::sqrt(static_cast<double>(s)) + 6.0;
  return window_cap(n, s, w, t.chain_order_capacity_factor, 4096);
}

class RandomizedSelector final : public Selector {
 public:
  explicit RandomizedSelector(const RandomizedTuning& t) : t_(t), sample_fallback_(make_sample_selector()) {}
  std::string_view name() const override { return "randomized"; }

  std::size_t top_k_workspace_bytes(std::size_t n, std::size_t k) const override {
    Arena a;
    plan(a, n, std::min(k, n));
    std::size_t bytes = std::max(a.used(), sample_fallback_->top_k_workspace_bytes(n, k));  // all O(k + sqrt n)
    if (chain_applies(n, std::min(k, n))) bytes = std::max(bytes, chain_top_k_bytes(n, std::min(k, n), true));
    return bytes;
  }
  std::size_t order_statistics_workspace_bytes(std::size_t n, std::size_t n_ranks) const override {
    Arena a;
    plan_order(a, n, n_ranks);
    std::size_t bytes = a.used();
    if (n_ranks == 1 && chain_applies(n, 1)) bytes = std::max(bytes, chain_rank_bytes(n, n / 2));
    return bytes;
  }
  std::size_t robust_statistics_workspace_bytes(std::size_t n) const override {
    std::size_t bytes = Selector::robust_statistics_workspace_bytes(n);
    if (chain_applies(n, 1)) {
      Arena a;
      take_chain(a, n, 0, robust_cap(n, t_), false, false);
      bytes = std::max(bytes, a.used());
    }
    return bytes;
  }

  SelectStats run_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& req,
                        Workspace& ws, float* d_out_values, std::uint32_t* d_out_indices) const override {
    const std::size_t k = std::min(req.k, n);
    if (k == 0) return SelectStats{};
    if (!chain_applies(n, k)) return legacy_top_k(stream, d_in, n, req, ws, d_out_values, d_out_indices);
    const std::size_t s = chain_samples(n, t_);
    const ChainWindow w = chain_window(n, k, s, t_.p_k, t_.capacity_factor, 1024);
    Arena sizing;
    take_chain(sizing, n, k, w.cap_b, true, req.sorted_output);
    // Room for the chain and its fallbacks at once, so that a loop grows the workspace once; the
    // full size (CUB's temp-size queries) is computed only while the workspace is too small.
    if (ws.capacity() < sizing.used()) ws.reserve(top_k_workspace_bytes(n, k));
    if (auto st = chain_top_k(stream, d_in, n, k, req, ws, d_out_values, d_out_indices, s, w)) return *st;
    // A device check failed: the host-driven path, exact whatever the sample.
    SelectStats st = legacy_top_k(stream, d_in, n, req, ws, d_out_values, d_out_indices);
    st.retries += 1;
    st.passes += 1;
    st.scratch_bytes = std::max(st.scratch_bytes, chain_top_k_bytes(n, k, req.sorted_output));
    return st;
  }

  SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                               const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const override {
    if (ranks.size() == 1 && chain_applies(n, 1) && ranks[0] < n) {
      if (ws.capacity() < chain_rank_bytes(n, ranks[0])) ws.reserve(order_statistics_workspace_bytes(n, 1));
      if (auto st = chain_rank(stream, d_in, n, ranks[0], ws, h_out)) return *st;
      SelectStats st = legacy_order_statistics(stream, d_in, n, ranks, ws, h_out);
      st.retries += 1;
      st.passes += 1;
      st.scratch_bytes = std::max(st.scratch_bytes, chain_rank_bytes(n, ranks[0]));
      return st;
    }
    return legacy_order_statistics(stream, d_in, n, ranks, ws, h_out);
  }

  RobustStats robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n, Workspace& ws,
                                SelectStats* stats) const override;

 private:
  bool chain_applies(std::size_t n, std::size_t k) const {
    return t_.device_chain && n > t_.direct_below && k < n && n <= (std::size_t{1} << 32);
  }
  std::size_t chain_top_k_bytes(std::size_t n, std::size_t k, bool sorted) const {
    const std::size_t s = chain_samples(n, t_);
    const ChainWindow w = chain_window(n, k, s, t_.p_k, t_.capacity_factor, 1024);
    Arena a;
    take_chain(a, n, k, w.cap_b, true, sorted);
    return a.used();
  }
  // The window is widest at the median: every rank gets at least the median's buffer, so that a
  // steady loop over ranks does not grow the workspace.
  std::size_t median_cap(std::size_t n) const {
    return chain_window(n, n / 2 + 1, order_samples(), t_.p_k, t_.chain_order_capacity_factor, 4096).cap_b;
  }
  std::size_t rank_cap(std::size_t n, std::size_t rank) const {
    return std::max(median_cap(n),
                    chain_window(n, rank + 1, order_samples(), t_.p_k, t_.chain_order_capacity_factor, 4096).cap_b);
  }
  std::size_t chain_rank_bytes(std::size_t n, std::size_t rank) const {
    Arena a;
    take_chain(a, n, 0, rank_cap(n, rank), false, false);
    return a.used();
  }
  std::size_t order_samples() const { return select::order_samples(t_); }

  std::optional<SelectStats> chain_top_k(cudaStream_t stream, const float* d_in, std::size_t n, std::size_t k,
                                         const SelectRequest& req, Workspace& ws, float* d_out_values,
                                         std::uint32_t* d_out_indices, std::size_t s, const ChainWindow& w) const {
    Arena sizing;
    take_chain(sizing, n, k, w.cap_b, true, req.sorted_output);
    const std::size_t bytes = sizing.used();
    Arena arena = arena_for(ws, bytes);
    const ChainBuffers b = take_chain(arena, n, k, w.cap_b, true, req.sorted_output);
    const MappedResults mr = mapped_results();
    WindowChain c;
    c.in = d_in;
    c.n = n;
    c.key = window_key_of(key_mode(req.order));
    c.job = WindowJob::kTopK;
    c.k = k;
    c.samples = static_cast<int>(s);
    c.seed = t_.seed;
    c.first = w.first;
    c.centre = w.centre;
    c.last = w.last;
    set_buffers(c, b, w.cap_b);
    c.out_values = d_out_values;
    c.out_indices = d_out_indices;
    c.sorted = req.sorted_output;
    c.result = mr.device;
    run_window_chain(stream, c);
    if (req.sorted_output) {
      sort_u64(stream, b.sort_temp, b.sort_temp_bytes, b.buf_a, b.sorted, k);
      write_sorted_window(stream, d_in, b.sorted, k, b.counters, d_out_values, d_out_indices);
    }
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    const WindowResult r = read_result(mr.host);
    if (r.status != kWindowOk) return std::nullopt;
    SelectStats st;
    st.count = static_cast<std::size_t>(r.count);
    st.passes = 1;
    st.scratch_bytes = bytes;
    return st;
  }

  std::optional<SelectStats> chain_rank(cudaStream_t stream, const float* d_in, std::size_t n, std::size_t rank,
                                        Workspace& ws, float* h_out) const {
    const std::size_t s = order_samples();
    const ChainWindow w = chain_window(n, rank + 1, s, t_.p_k, t_.chain_order_capacity_factor, 4096);
    const std::size_t bytes = chain_rank_bytes(n, rank);
    Arena arena = arena_for(ws, bytes);
    const std::size_t cap = rank_cap(n, rank);
    const ChainBuffers b = take_chain(arena, n, 0, cap, false, false);
    const MappedResults mr = mapped_results();
    WindowChain c;
    c.in = d_in;
    c.n = n;
    c.key = WindowKey::kSmallest;
    c.job = WindowJob::kRank;
    c.k = rank + 1;
    c.samples = static_cast<int>(s);
    c.seed = t_.seed;
    c.first = w.first;
    c.centre = w.centre;
    c.last = w.last;
    set_buffers(c, b, cap);
    c.result = mr.device;
    run_window_chain(stream, c);
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    const WindowResult r = read_result(mr.host);
    if (r.status != kWindowOk) return std::nullopt;
    h_out[0] = r.key == kInvalidKey ? std::numeric_limits<float>::quiet_NaN() : from_ascending_bits(r.key);
    SelectStats st;
    st.passes = 1;
    st.scratch_bytes = bytes;
    return st;
  }
  static void set_buffers(WindowChain& c, const ChainBuffers& b, std::size_t cap_b) {
    c.plan = b.plan;
    c.counters = b.counters;
    c.buf_a = b.buf_a;
    c.buf_b = b.buf_b;
    c.cap_b = cap_b;
    c.candidates = b.cand;
    c.tile_ties = b.tiles;
    c.chunk_ties = b.chunk_ties;
  }

  SelectStats legacy_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& req,
                           Workspace& ws, float* d_out_values, std::uint32_t* d_out_indices) const {
    SelectStats stats;
    const std::size_t k = std::min(req.k, n);
    if (k == 0) return stats;
    const KeyMode mode = key_mode(req.order);
    const Plan p = lay_out(ws, stats, [&](Arena& a) { return plan(a, n, k); });

    std::size_t na = 0, nb_take = 0;
    const std::uint64_t* b_src = p.sorted_b;
    if (n <= t_.direct_below || k == n) {
      // Everything valid goes to region A (k == n), or to B to be sorted whole (small n).
      const bool all = k == n;
      GPUCLEAN_CUDA_TRY(cudaMemsetAsync(p.bounds, 0xFF, 4, stream));  // one bound: kInvalidKey
      const auto c = pass(stream, d_in, n, mode, p, 1, k, stats,
                          {static_cast<std::uint8_t>(all ? kRegionA : kRegionB), kRegionNone});
      if (all) {
        na = c[0];
      } else {
        sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, c[0]);
        nb_take = std::min<std::size_t>(k, c[0]);
      }
    } else {
      sample_keys(stream, d_in, n, mode, t_.seed, p.samples, p.s);
      sort_u32(stream, p.sort_temp, p.sort_temp_bytes, p.samples, p.sorted, p.s);
      PivotWindow w = binomial_pivot_window(n, k, p.s, t_.p_k);
      const long long width = std::max<long long>(1, w.last - w.first);
      const auto s = static_cast<long long>(p.s);
      while (true) {
        window_bounds_kernel<<<1, 1, 0, stream>>>(p.sorted, s, w.first, w.last, p.bounds);
        GPUCLEAN_CHECK_LAUNCH();
        // A holds k: a first bin of more than k keys is a retry anyway.
        const auto c = pass(stream, d_in, n, mode, p, 2, k, stats, {kRegionA, kRegionB, kRegionNone});
        const unsigned long long first = c[0], middle = c[1];
        const bool open_top = w.last >= s;
        if (first >= k) {  // the k-th key lies below the window
          w.last = w.first;
          w.first = std::max<long long>(w.first - width, -1);
          ++stats.retries;
          continue;
        }
        if (first + middle < k && !open_top) {  // above it
          w.first = w.last;
          w.last = std::min<long long>(w.last + width, s);
          ++stats.retries;
          continue;
        }
        if (middle > p.cap_b) {
          // The middle bin did not fit: a run of equal keys wider than the window. SampleSelect's
          // equality buckets are made for that (and need no more scratch than O(k + sqrt n)).
          SelectStats st = sample_fallback_->top_k(stream, d_in, n, req, ws, d_out_values, d_out_indices);
          st.retries += stats.retries + 1;
          st.passes += stats.passes;
          st.scratch_bytes = std::max(st.scratch_bytes, stats.scratch_bytes);
          return st;
        }
        na = first;
        const std::size_t need = std::min<std::size_t>(k - first, middle);  // less only when k > n_valid
        if (need < middle) {
          sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, middle);
        } else {
          b_src = p.buf_b;  // the whole middle bin is selected: no sort needed
        }
        nb_take = need;
        break;
      }
    }
    stats.count = na + nb_take;
    // A and B are sorted together when A holds keys; B alone goes out as it is.
    write_selection(stream, d_in, p, na, b_src, nb_take, req.sorted_output && na > 0, d_out_values, d_out_indices);
    return stats;
  }

  SelectStats legacy_order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                      const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const;

  Plan plan(Arena& a, std::size_t n, std::size_t k) const {
    Plan p{};
    p.s = splitter_count(n, t_.splitters_per_sqrt_n);
    p.samples = a.take<std::uint32_t>(p.s);
    p.sorted = a.take<std::uint32_t>(p.s);
    p.sort_temp_bytes = sort_temp_bytes_u32(p.s);
    p.sort_temp = a.take<std::byte>(p.sort_temp_bytes);
    take_pass_buffers(a, p, 3, true);
    std::size_t cap_b = n;
    if (n > t_.direct_below) {
      const PivotWindow w = binomial_pivot_window(n, k, p.s, t_.p_k);
      const double expected = static_cast<double>(n) * static_cast<double>(w.last - w.first + 1) /
                              static_cast<double>(p.s + 1);
      cap_b = static_cast<std::size_t>(t_.capacity_factor * expected) + 1024;
    }
    take_ab_buffers(a, p, k, cap_b);
    return p;
  }

  Plan plan_order(Arena& a, std::size_t n, std::size_t n_ranks) const;

  // One pass over the n_bounds bounds already in p.bounds; returns the segment counts.
  // `inline_regions` route up to three bounds' segments without a host copy; an empty list
  // takes the regions from p.regions on the device.
  static std::vector<unsigned long long> pass(cudaStream_t stream, const float* d_in, std::size_t n, KeyMode mode,
                                              const Plan& p, int n_bounds, unsigned long long cap_a, SelectStats& stats,
                                              std::initializer_list<std::uint8_t> inline_regions = {}) {
    SegmentPass s = filter_pass(p, d_in, n, mode, cap_a);
    s.bounds = p.bounds;
    s.n_bounds = n_bounds;
    s.regions = inline_regions.size() ? nullptr : p.regions;
    int r = 0;
    for (std::uint8_t region : inline_regions) s.inline_regions[r++] = region;
    return run_segment_pass(stream, s, static_cast<std::size_t>(n_bounds) + 1, stats);
  }

  RandomizedTuning t_;
  std::unique_ptr<Selector> sample_fallback_;  // for middle bins of massive duplicates
};

}  // namespace

std::size_t chain_samples(std::size_t n, const RandomizedTuning& t) {
  const double want = std::sqrt(static_cast<double>(n));
  std::size_t s = 4096;
  while (s < 16384 && (s < t.chain_min_samples || (static_cast<double>(s) < want && s < t.chain_max_samples))) s *= 2;
  return s;
}

ChainWindow chain_window(std::size_t n, std::size_t k, std::size_t samples, double p_k, double factor,
                         std::size_t extra) {
  const PivotWindow w = binomial_pivot_window(n, k, samples, p_k);
  const auto ls = static_cast<long long>(samples);
  const long long m = std::clamp<long long>(
      static_cast<long long>(static_cast<double>(k) / (static_cast<double>(n) / static_cast<double>(samples + 1))), 0,
      ls);
  ChainWindow c;
  c.first = w.first;
  c.last = w.last;
  c.centre = std::clamp<long long>(m, std::max<long long>(w.first, 0), std::min<long long>(w.last, ls - 1));
  c.cap_b = window_cap(n, samples, static_cast<double>(w.last - w.first + 1), factor, extra);
  return c;
}

PivotWindow binomial_pivot_window(std::size_t n, std::size_t k, std::size_t splitters, double p_k) {
  const double p = std::clamp(static_cast<double>(k) / static_cast<double>(n), 0.0, 1.0);
  const auto s = static_cast<long long>(splitters);
  // Bucket i holds keys in [splitter[i-1], splitter[i]); the most likely one for the k-th key:
  const long long m = std::clamp<long long>(
      static_cast<long long>(static_cast<double>(k) / (static_cast<double>(n) / static_cast<double>(s + 1))), 0, s);
  double cumulative = std::exp(log_binomial_pmf(splitters, static_cast<std::size_t>(m), p));
  long long r = 0;
  while (cumulative < p_k && (m - r > 0 || m + r < s)) {
    ++r;
    if (m - r >= 0) cumulative += std::exp(log_binomial_pmf(splitters, static_cast<std::size_t>(m - r), p));
    if (m + r <= s) cumulative += std::exp(log_binomial_pmf(splitters, static_cast<std::size_t>(m + r), p));
  }
  // Buckets m-r .. m+r are bounded by splitters m-r-1 and m+r.
  PivotWindow w;
  w.first = std::max<long long>(m - r - 1, -1);
  w.last = std::min<long long>(m + r, s);
  return w;
}

std::unique_ptr<Selector> make_randomized_selector(const RandomizedTuning& tuning) {
  return std::make_unique<RandomizedSelector>(tuning);
}
std::unique_ptr<Selector> make_randomized_selector() { return make_randomized_selector(RandomizedTuning{}); }

}  // namespace gpuclean::select

// ---- order statistics: one window per rank, merged, counted and saved in one pass ----
namespace gpuclean::select {
namespace {
using namespace detail;

struct Interval {
  std::uint32_t lo, hi;  // inclusive key range
};

Plan RandomizedSelector::plan_order(Arena& a, std::size_t n, std::size_t n_ranks) const {
  Plan p{};
  p.s = splitter_count(n, t_.order_splitters_per_sqrt_n);
  p.samples = a.take<std::uint32_t>(p.s);
  p.sorted = a.take<std::uint32_t>(p.s);
  p.sort_temp_bytes = sort_temp_bytes_u32(p.s);
  p.sort_temp = a.take<std::byte>(p.sort_temp_bytes);
  take_pass_buffers(a, p, 2 * n_ranks + 2, true);
  // Worst case: every rank at the median, where the window is widest.
  std::size_t cap_b = n;
  if (n > t_.direct_below) {
    const PivotWindow w = binomial_pivot_window(n, n / 2, p.s, t_.p_k);
    const double expected = static_cast<double>(n) * static_cast<double>(w.last - w.first + 1) / static_cast<double>(p.s + 1);
    cap_b = std::min<std::size_t>(n, static_cast<std::size_t>(t_.capacity_factor * expected * static_cast<double>(n_ranks)) + 1024);
  }
  take_b_buffers(a, p, cap_b);  // nothing goes to A: no A, no final sort
  take_scratch(a, p, radix_threshold_bytes() + 2 * n_ranks * (sizeof(unsigned long long) + 4) + 1024);
  return p;
}

SelectStats RandomizedSelector::legacy_order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                                        const std::vector<std::size_t>& ranks, Workspace& ws,
                                                        float* h_out) const {
  SelectStats stats;
  if (!start_order_statistics(n, ranks, h_out)) return stats;
  const std::size_t bytes = order_statistics_workspace_bytes(n, ranks.size());
  Arena arena = arena_for(ws, bytes);
  Plan p = plan_order(arena, n, ranks.size());
  stats.scratch_bytes = bytes;
  const KeyMode mode = KeyMode::kSmallest;

  if (n <= t_.direct_below) {  // small: sort every valid key and read the ranks
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(p.bounds, 0xFF, 4, stream));  // one bound: kInvalidKey
    const auto c = pass(stream, d_in, n, mode, p, 1, 0, stats, {kRegionB, kRegionNone});
    sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, c[0], 32);
    std::vector<std::uint64_t> sorted(c[0]);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(sorted.data(), p.sorted_b, sorted.size() * 8, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (ranks[i] < sorted.size()) h_out[i] = from_ascending_bits(composite_key(sorted[ranks[i]]));
    return stats;
  }

  sample_keys(stream, d_in, n, mode, t_.seed, p.samples, p.s);
  sort_u32(stream, p.sort_temp, p.sort_temp_bytes, p.samples, p.sorted, p.s);
  const auto s = static_cast<long long>(p.s);
  // The splitters at the windows' ends, gathered on the device: a few values, not the sample.
  auto endpoint_keys = [&](const std::vector<PivotWindow>& ws_) {
    std::vector<unsigned long long> pos;
    for (const PivotWindow& w : ws_) {
      pos.push_back(static_cast<unsigned long long>(std::clamp<long long>(w.first, 0, s - 1)));
      pos.push_back(static_cast<unsigned long long>(std::clamp<long long>(w.last, 0, s - 1)));
    }
    return keys_at(stream, p.sorted, false, pos, p.scratch + radix_threshold_bytes());
  };

  std::vector<PivotWindow> windows(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) windows[i] = binomial_pivot_window(n, std::min(ranks[i], n - 1) + 1, p.s, t_.p_k);
  const long long width = std::max<long long>(1, windows.empty() ? 1 : windows[0].last - windows[0].first);

  while (true) {
    // Key intervals of the windows, merged where they touch.
    std::vector<Interval> iv(ranks.size());
    const std::vector<std::uint32_t> ends = endpoint_keys(windows);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const PivotWindow& w = windows[i];
      iv[i].lo = w.first < 0 ? 0u : ends[2 * i];
      iv[i].hi = w.last >= s ? kInvalidKey - 1 : std::min(ends[2 * i + 1], kInvalidKey - 1);
    }
    std::vector<Interval> merged = iv;
    std::sort(merged.begin(), merged.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
    std::vector<Interval> m;
    for (const Interval& x : merged) {
      if (!m.empty() && x.lo <= m.back().hi + 1ull) m.back().hi = std::max(m.back().hi, x.hi);
      else m.push_back(x);
    }
    // Bounds lo_j, hi_j + 1 per interval, then one for NaN. Segment 2j+1 is interval j.
    std::vector<std::uint32_t> bounds;
    std::vector<std::uint8_t> regions = {kRegionNone};
    for (const Interval& x : m) {
      bounds.push_back(x.lo);
      regions.push_back(x.lo == x.hi ? kRegionNone : kRegionB);  // a single key needs no saving
      bounds.push_back(x.hi + 1);
      regions.push_back(kRegionNone);
    }
    const bool nan_segment = bounds.back() != kInvalidKey;
    if (nan_segment) {
      bounds.push_back(kInvalidKey);
      regions.push_back(kRegionNone);
    }
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.bounds, bounds.data(), bounds.size() * 4, cudaMemcpyHostToDevice, stream));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.regions, regions.data(), regions.size(), cudaMemcpyHostToDevice, stream));
    const auto c = pass(stream, d_in, n, mode, p, static_cast<int>(bounds.size()), 0, stats);
    // NaN keys are the last segment either way: the one above the last bound, kInvalidKey.
    const unsigned long long n_valid = n - c.back();

    // below[j]: keys under interval j; saved[j]: saved keys of intervals before j.
    std::vector<unsigned long long> below(m.size()), saved(m.size());
    unsigned long long run = 0, run_saved = 0;
    for (std::size_t j = 0; j < m.size(); ++j) {
      run += c[2 * j];
      below[j] = run;
      saved[j] = run_saved;
      if (regions[2 * j + 1] == kRegionB) run_saved += c[2 * j + 1];
      run += c[2 * j + 1];
    }
    bool retry = false;
    std::vector<std::size_t> interval_of(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i] >= n_valid) continue;
      const unsigned long long k = ranks[i] + 1;
      const auto it = std::upper_bound(m.begin(), m.end(), iv[i].lo, [](std::uint32_t v, const Interval& x) { return v < x.lo; });
      const std::size_t j = static_cast<std::size_t>(it - m.begin()) - 1;
      interval_of[i] = j;
      PivotWindow& w = windows[i];
      if (below[j] >= k && w.first >= 0) {  // the rank lies below its window
        w.last = w.first;
        w.first = std::max<long long>(w.first - width, -1);
        retry = true;
      } else if (below[j] + c[2 * j + 1] < k && w.last < s) {
        w.first = w.last;
        w.last = std::min<long long>(w.last + width, s);
        retry = true;
      }
    }
    if (retry) {
      ++stats.retries;
      continue;
    }
    unsigned long long fill_b = 0;
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&fill_b, p.fill + 1, sizeof fill_b, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    if (fill_b > p.cap_b) {  // windows too full to keep: exact radix path, rank by rank
      ++stats.retries;
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i] >= n_valid) continue;
        h_out[i] = from_ascending_bits(exact_rank_key(stream, d_in, n, mode, ranks[i] + 1, p, stats));
      }
      return stats;
    }
    sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, fill_b, 32);
    std::vector<unsigned long long> pos;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i] >= n_valid) continue;
      const std::size_t j = interval_of[i];
      if (m[j].lo == m[j].hi) {
        h_out[i] = from_ascending_bits(m[j].lo);
        continue;
      }
      pos.push_back(saved[j] + (ranks[i] - below[j]));
      which.push_back(i);
    }
    const std::vector<std::uint32_t> keys = keys_at(stream, p.sorted_b, true, pos, p.scratch);
    for (std::size_t q = 0; q < which.size(); ++q) h_out[which[q]] = from_ascending_bits(keys[q]);
    return stats;
  }
}

// The median of the finite values, then the same rank of |x - median| with the median read on
// the device: two chains, one synchronization. Falls back to the default (two order-statistics
// calls over a finite copy) when a window misses.
RobustStats RandomizedSelector::robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                                  Workspace& ws, SelectStats* stats) const {
  if (stats) *stats = SelectStats{};
  if (!chain_applies(n, 1)) return Selector::robust_statistics(stream, d_in, n, ws, stats);
  const std::size_t cap = robust_cap(n, t_);
  Arena sizing;
  take_chain(sizing, n, 0, cap, false, false);
  const std::size_t bytes = sizing.used();
  Arena arena = arena_for(ws, bytes);
  const ChainBuffers b = take_chain(arena, n, 0, cap, false, false);
  const MappedResults mr = mapped_results();
  WindowChain c;
  c.in = d_in;
  c.n = n;
  c.job = WindowJob::kMedianValid;
  c.samples = static_cast<int>(order_samples());
  c.z = normal_quantile_two_sided(t_.p_k);
  set_buffers(c, b, cap);
  c.key = WindowKey::kFinite;
  c.seed = t_.seed;
  c.result = mr.device;
  c.answer_value = b.value;
  run_window_chain(stream, c);
  c.key = WindowKey::kDeviation;
  c.seed = t_.seed ^ 0xD1B54A32D192ED03ull;
  c.centre_value = b.value;
  c.result = mr.device + 1;
  c.answer_value = nullptr;
  run_window_chain(stream, c);
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  const WindowResult median = read_result(mr.host), mad = read_result(mr.host + 1);
  RobustStats r;
  if (median.status == kWindowEmpty) {
    if (stats) stats->passes = 1, stats->scratch_bytes = bytes;
    return r;
  }
  if (median.status == kWindowOk && mad.status == kWindowOk && median.key != kInvalidKey && mad.key != kInvalidKey) {
    r.n_finite = static_cast<std::size_t>(median.n_valid);
    r.median = from_ascending_bits(median.key);
    r.mad = from_ascending_bits(mad.key);
    if (stats) stats->passes = 2, stats->scratch_bytes = bytes;
    return r;
  }
  SelectStats inner;
  r = Selector::robust_statistics(stream, d_in, n, ws, &inner);
  if (stats) {
    *stats = inner;
    stats->passes += 2;
    stats->retries += 1;
    stats->scratch_bytes = std::max(inner.scratch_bytes, bytes);
  }
  return r;
}

}  // namespace
}  // namespace gpuclean::select

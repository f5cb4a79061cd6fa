// The randomized backend's host-driven path: two pivots from a sample, one pass, a retry when the
// window missed; exact whatever the sample. Runs where the device chain does not apply, and as
// its fallback when a device check failed.

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "select/backends/randomized_selector.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/host_flow.hpp"

namespace gpuclean::select::detail {
namespace {

// Bounds of the window [first, last] over the sorted splitters: elements below splitter[first]
// form the first bin, those in [splitter[first], splitter[last]] the middle bin.
__global__ void window_bounds_kernel(const std::uint32_t* sorted, long long s, long long first, long long last,
                                     std::uint32_t* bounds) {
  const std::uint32_t lo = first < 0 ? 0u : sorted[first];
  const std::uint32_t hi = last >= s ? kInvalidKey - 1 : min(sorted[last], kInvalidKey - 1);
  bounds[0] = lo;
  bounds[1] = hi + 1;  // NaN keys stay above the middle bin
}

struct Plan : FilterBuffers {
  std::uint32_t *samples, *sorted;
  void* sort_temp;
  std::size_t sort_temp_bytes, s;
};

// The sample of s splitters and its sort, first in either plan.
Plan take_sample(Arena& a, std::size_t s) {
  Plan p{};
  p.s = s;
  p.samples = a.take<std::uint32_t>(p.s);
  p.sorted = a.take<std::uint32_t>(p.s);
  p.sort_temp_bytes = sort_temp_bytes_u32(p.s);
  p.sort_temp = a.take<std::byte>(p.sort_temp_bytes);
  return p;
}

Plan plan_top_k(Arena& a, std::size_t n, std::size_t k, const RandomizedTuning& t) {
  Plan p = take_sample(a, splitter_count(n, t.splitters_per_sqrt_n));
  take_pass_buffers(a, p, 3, true);
  std::size_t cap_b = n;
  if (n > t.direct_below) {
    const PivotWindow w = binomial_pivot_window(n, k, p.s, t.p_k);
    const double expected = static_cast<double>(n) * static_cast<double>(w.last - w.first + 1) /
                            static_cast<double>(p.s + 1);
    cap_b = static_cast<std::size_t>(t.capacity_factor * expected) + 1024;
  }
  take_ab_buffers(a, p, k, cap_b);
  return p;
}

Plan plan_order(Arena& a, std::size_t n, std::size_t n_ranks, const RandomizedTuning& t) {
  Plan p = take_sample(a, splitter_count(n, t.order_splitters_per_sqrt_n));
  take_pass_buffers(a, p, 2 * n_ranks + 2, true);
  // Worst case: every rank at the median, where the window is widest.
  std::size_t cap_b = n;
  if (n > t.direct_below) {
    const PivotWindow w = binomial_pivot_window(n, n / 2, p.s, t.p_k);
    const double expected = static_cast<double>(n) * static_cast<double>(w.last - w.first + 1) / static_cast<double>(p.s + 1);
    cap_b = std::min<std::size_t>(n, static_cast<std::size_t>(t.capacity_factor * expected * static_cast<double>(n_ranks)) + 1024);
  }
  take_b_buffers(a, p, cap_b);  // nothing goes to A: no A, no final sort
  take_scratch(a, p, radix_threshold_bytes() + 2 * n_ranks * (sizeof(unsigned long long) + 4) + 1024);
  return p;
}

// One pass over the n_bounds bounds already in p.bounds; returns the segment counts.
// `inline_regions` route up to three bounds' segments without a host copy; an empty list
// takes the regions from p.regions on the device.
std::vector<unsigned long long> pass(cudaStream_t stream, const float* d_in, std::size_t n, KeyMode mode, const Plan& p,
                                     int n_bounds, unsigned long long cap_a, SelectStats& stats,
                                     std::initializer_list<std::uint8_t> inline_regions = {}) {
  SegmentPass s = filter_pass(p, d_in, n, mode, cap_a);
  s.bounds = p.bounds;
  s.n_bounds = n_bounds;
  s.regions = inline_regions.size() ? nullptr : p.regions;
  int r = 0;
  for (std::uint8_t region : inline_regions) s.inline_regions[r++] = region;
  return run_segment_pass(stream, s, static_cast<std::size_t>(n_bounds) + 1, stats);
}

struct Interval {
  std::uint32_t lo, hi;  // inclusive key range
};

}  // namespace

std::size_t RandomizedSelector::host_top_k_bytes(std::size_t n, std::size_t k) const {
  Arena a;
  plan_top_k(a, n, k, t_);
  return a.used();
}

std::size_t RandomizedSelector::host_order_statistics_bytes(std::size_t n, std::size_t n_ranks) const {
  Arena a;
  plan_order(a, n, n_ranks, t_);
  return a.used();
}

SelectStats RandomizedSelector::host_top_k(cudaStream_t stream, const float* d_in, std::size_t n,
                                           const SelectRequest& req, Workspace& ws, float* d_out_values,
                                           std::uint32_t* d_out_indices) const {
  SelectStats stats;
  const std::size_t k = std::min(req.k, n);
  if (k == 0) return stats;
  const KeyMode mode = key_mode(req.order);
  const Plan p = lay_out(ws, stats, [&](Arena& a) { return plan_top_k(a, n, k, t_); });

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
        const SelectStats st = sample_fallback_->top_k(stream, d_in, n, req, ws, d_out_values, d_out_indices);
        return after_fallback(st, stats.passes, stats.scratch_bytes, stats.retries);
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

// Order statistics: one window per rank, merged, counted and saved in one pass.
SelectStats RandomizedSelector::host_order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                                      const std::vector<std::size_t>& ranks, Workspace& ws,
                                                      float* h_out) const {
  SelectStats stats;
  if (!start_order_statistics(n, ranks, h_out)) return stats;
  const std::size_t bytes = order_statistics_workspace_bytes(n, ranks.size());
  Arena arena = arena_for(ws, bytes);
  Plan p = plan_order(arena, n, ranks.size(), t_);
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

}  // namespace gpuclean::select::detail

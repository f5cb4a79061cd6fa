// Order statistics by Kelley's cutting-plane method (Beliakov, 2011), in the hybrid form of
// the paper: a few iterations of the method bracket the k-th key, then the bracket is compacted
// (copy_if) and sorted, and the k-th key is read off.
//
// The k-th smallest key minimises the convex, piecewise-linear quantile objective
//     F(t) = a * sum_{key > t} (key - t) + (1 - a) * sum_{key < t} (t - key),   a = k / n_valid,
// whose subgradient follows from the counts below and above t. Kelley's method keeps the
// bracket [y_L, y_R] and its two supporting lines; the next point is where they cross. Each
// evaluation of F and its subgradient is one parallel reduction over the input. Keys are the
// library's ranking keys read as numbers: order-preserving and bounded by 2^32, so the sums keep
// their precision even where a huge outlier would swamp them in value space (the paper's caveat).
//
// The bracket is exact at every step: count(key <= y_L) < k <= count(key < y_R). Top-k then
// takes every key <= y_L and the best of the compacted bracket.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "select/backends/backends.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/detail/engine.hpp"

namespace gpuclean::select {
namespace {

using namespace detail;

constexpr int kIterations = 6;      // the paper stops after 5 to 7
constexpr int kMaxIterations = 40;  // then keeps going while the bracket does not fit its buffer

struct Plan {
  std::uint32_t* bounds;
  unsigned long long *counts, *fill;
  std::uint64_t *buf_a, *buf_b, *sorted_b, *final_sorted;
  void *b_temp, *final_temp;
  std::size_t b_temp_bytes, final_temp_bytes, cap_b;
  std::byte* scratch;
  std::size_t scratch_bytes;
};

// The bracket around the k-th smallest key: every key <= lo is better than it, and at least k
// keys are below hi. `le_lo` = count(key <= lo).
struct Bracket {
  std::uint32_t lo = 0, hi = kInvalidKey - 1;
  unsigned long long le_lo = 0, lt_hi = 0, valid = 0;
  int passes = 0;
};

class CuttingPlaneSelector final : public Selector {
 public:
  std::string_view name() const override { return "cutting-plane"; }

  std::size_t top_k_workspace_bytes(std::size_t n, std::size_t k) const override {
    Arena a;
    plan(a, n, std::min(k, n));
    return a.used();
  }
  std::size_t order_statistics_workspace_bytes(std::size_t n, std::size_t) const override {
    Arena a;
    plan(a, n, 0);
    return a.used();
  }

  SelectStats run_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& req,
                        Workspace& ws, float* out_v, std::uint32_t* out_i) const override {
    SelectStats stats;
    const std::size_t k = std::min(req.k, n);
    if (k == 0) return stats;
    const KeyMode mode = key_mode(req.order);
    const std::size_t bytes = top_k_workspace_bytes(n, k);
    Arena arena = arena_for(ws, bytes);
    const Plan p = plan(arena, n, k);
    stats.scratch_bytes = bytes;

    const Bracket b = bracket(stream, d_in, n, mode, k, p);
    stats.passes += b.passes;
    std::size_t na = 0, nb = 0;
    const std::uint64_t* src_b = p.sorted_b;
    if (b.valid <= k) {  // every valid key is selected
      na = copy_bracket(stream, d_in, n, mode, p, kInvalidKey, kInvalidKey, k, &stats)[0];
    } else if (b.lt_hi - b.le_lo > p.cap_b) {  // the bracket does not fit its buffer
      Arena scratch(p.scratch, p.scratch_bytes);
      Threshold t{b.lo + 1, b.le_lo};  // a bracket of one key is that key, with all its ties
      if (b.hi - b.lo != 2) {          // otherwise the exact radix path finds the k-th key
        ++stats.retries;
        t = radix_threshold(stream, d_in, n, mode, k, scratch);
        stats.passes += 3;
      }
      extract_with_threshold(stream, d_in, n, mode, t, k, p.buf_a, scratch);
      stats.passes += 2;
      na = k;
    } else {
      // copy_if: keys <= lo are all selected (A); the bracket (lo, hi) is compacted (B).
      const auto c = copy_bracket(stream, d_in, n, mode, p, b.lo + 1, b.hi, k, &stats);
      na = c[0];
      nb = k - na;
      sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, c[1]);
    }
    stats.count = na + nb;
    if (req.sorted_output) {
      if (nb) GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.buf_a + na, src_b, nb * 8, cudaMemcpyDeviceToDevice, stream));
      sort_u64(stream, p.final_temp, p.final_temp_bytes, p.buf_a, p.final_sorted, na + nb);
      write_top_k(stream, d_in, p.final_sorted, na + nb, nullptr, 0, out_v, out_i);
    } else {
      write_top_k(stream, d_in, p.buf_a, na, src_b, nb, out_v, out_i);
    }
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    return stats;
  }

  // One rank at a time: the method brackets a single order statistic.
  SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                               const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const override {
    SelectStats stats;
    std::fill(h_out, h_out + ranks.size(), std::numeric_limits<float>::quiet_NaN());
    if (n == 0 || ranks.empty()) return stats;
    const std::size_t bytes = order_statistics_workspace_bytes(n, ranks.size());
    Arena arena = arena_for(ws, bytes);
    const Plan p = plan(arena, n, 0);
    stats.scratch_bytes = bytes;
    const KeyMode mode = KeyMode::kSmallest;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const unsigned long long k = static_cast<unsigned long long>(ranks[i]) + 1;
      if (ranks[i] >= n) continue;
      const Bracket b = bracket(stream, d_in, n, mode, k, p);
      stats.passes += b.passes;
      if (k > b.valid) continue;  // beyond the valid keys: NaN
      std::uint32_t key;
      if (b.hi - b.lo == 2) {  // the method landed on the k-th key itself
        key = b.lo + 1;
      } else if (b.lt_hi - b.le_lo > p.cap_b) {
        ++stats.retries;
        Arena scratch(p.scratch, p.scratch_bytes);
        key = radix_threshold(stream, d_in, n, mode, k, scratch).key;
        stats.passes += 3;
      } else {
        const auto c = copy_bracket(stream, d_in, n, mode, p, b.lo + 1, b.hi, 0, &stats);
        sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, c[1], 32);
        std::uint64_t chosen = 0;
        GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&chosen, p.sorted_b + (k - 1 - c[0]), 8, cudaMemcpyDeviceToHost, stream));
        GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
        key = composite_key(chosen);
      }
      h_out[i] = from_ascending_bits(key);
    }
    return stats;
  }

 private:
  static Plan plan(Arena& a, std::size_t n, std::size_t k) {
    Plan p{};
    p.bounds = a.take<std::uint32_t>(2);
    p.counts = a.take<unsigned long long>(3);
    p.fill = a.take<unsigned long long>(2);
    p.buf_a = a.take<std::uint64_t>(k);
    // Beliakov's brackets held 1-5% of the input after a handful of iterations; keep n/64.
    p.cap_b = std::min<std::size_t>(n, n / 64 + 4096);
    p.buf_b = a.take<std::uint64_t>(p.cap_b);
    p.sorted_b = a.take<std::uint64_t>(p.cap_b);
    p.b_temp_bytes = sort_temp_bytes_u64(p.cap_b);
    p.b_temp = a.take<std::byte>(p.b_temp_bytes);
    p.final_sorted = a.take<std::uint64_t>(k);
    p.final_temp_bytes = sort_temp_bytes_u64(k);
    p.final_temp = a.take<std::byte>(p.final_temp_bytes);
    p.scratch_bytes = objective_bytes() + radix_threshold_bytes() + (k ? extract_bytes(n) : 0);
    p.scratch = a.take<std::byte>(p.scratch_bytes);
    return p;
  }

  // Kelley's iterations on the quantile objective.
  Bracket bracket(cudaStream_t stream, const float* d_in, std::size_t n, KeyMode mode, unsigned long long k,
                  const Plan& p) const {
    Bracket b;
    auto terms_at = [&](std::uint32_t t) {
      Arena scratch(p.scratch, p.scratch_bytes);
      ++b.passes;
      return objective_pass(stream, d_in, n, mode, t, scratch);
    };
    // Step 0: the extremes of the key range; F there follows from the count and sum of keys.
    const ObjectiveTerms all = terms_at(0);
    b.valid = all.valid;
    b.lt_hi = all.valid;
    if (k >= all.valid || all.valid == 0) return b;
    const double alpha = static_cast<double>(k) / static_cast<double>(all.valid);
    const double v = static_cast<double>(all.valid);
    double f_lo = alpha * all.total;                                                 // F(0)
    double g_lo = -alpha * v;                                                         // right slope at 0
    double f_hi = (1.0 - alpha) * (v * static_cast<double>(b.hi) - all.total);        // F(max)
    double g_hi = (1.0 - alpha) * v;                                                  // left slope at max
    for (int it = 0; it < kMaxIterations && b.hi - b.lo > 1; ++it) {
      if (it >= kIterations && b.lt_hi - b.le_lo <= p.cap_b) break;
      // Where the supporting lines at lo and hi cross.
      const double lo = b.lo, hi = b.hi;
      double t = (f_hi - f_lo + g_lo * lo - g_hi * hi) / (g_lo - g_hi);
      if (!std::isfinite(t)) t = 0.5 * (lo + hi);
      t = std::clamp(std::round(t), lo + 1.0, hi - 1.0);
      const auto tk = static_cast<std::uint32_t>(t);
      const ObjectiveTerms at = terms_at(tk);
      const double above = static_cast<double>(at.valid - at.below - at.equal);
      const double f = alpha * at.above_sum + (1.0 - alpha) * at.below_sum;
      if (at.below < k && k <= at.below + at.equal) {  // t is the k-th key: a bracket of one key
        b.lo = tk - 1;
        b.hi = tk + 1;
        b.le_lo = at.below;
        b.lt_hi = at.below + at.equal;
        break;
      }
      if (at.below + at.equal < k) {  // the k-th key lies above t
        b.lo = tk;
        b.le_lo = at.below + at.equal;
        f_lo = f;
        g_lo = (1.0 - alpha) * static_cast<double>(at.below + at.equal) - alpha * above;
      } else {  // below t
        b.hi = tk;
        b.lt_hi = at.below;
        f_hi = f;
        g_hi = (1.0 - alpha) * static_cast<double>(at.below) - alpha * (above + static_cast<double>(at.equal));
      }
    }
    return b;
  }

  // One pass: keys < first_bound go to A (cap_a), keys in [first_bound, second_bound) to B.
  std::vector<unsigned long long> copy_bracket(cudaStream_t stream, const float* d_in, std::size_t n, KeyMode mode,
                                               const Plan& p, std::uint32_t first_bound, std::uint32_t second_bound,
                                               std::size_t cap_a, SelectStats* stats) const {
    const std::uint32_t bounds[2] = {first_bound, second_bound};
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.bounds, bounds, sizeof bounds, cudaMemcpyHostToDevice, stream));
    SegmentPass s;
    s.in = d_in;
    s.n = n;
    s.mode = mode;
    s.bounds = p.bounds;
    s.n_bounds = 2;
    s.inline_regions[0] = cap_a ? kRegionA : kRegionNone;
    s.inline_regions[1] = kRegionB;
    s.counts = p.counts;
    s.buf_a = p.buf_a;
    s.cap_a = cap_a;
    s.buf_b = p.buf_b;
    s.cap_b = p.cap_b;
    s.fill = p.fill;
    segment_pass(stream, s);
    ++stats->passes;
    std::vector<unsigned long long> c(3);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(c.data(), p.counts, 24, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    return c;
  }
};

}  // namespace

std::unique_ptr<Selector> make_cutting_plane_selector() { return std::make_unique<CuttingPlaneSelector>(); }

}  // namespace gpuclean::select

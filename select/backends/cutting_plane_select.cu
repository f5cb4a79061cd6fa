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
#include <optional>
#include <vector>

#include "select/backends/backends.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/host_flow.hpp"

namespace gpuclean::select {
namespace {

using namespace detail;

constexpr int kIterations = 6;      // the paper stops after 5 to 7
constexpr int kMaxIterations = 40;  // then keeps going while the bracket does not fit its buffer

// The flow's buffers alone (the bracket's two regions are inline, so no regions buffer); the
// scratch also serves the objective passes.
using Plan = FilterBuffers;

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
    const Plan p = lay_out(ws, stats, [&](Arena& a) { return plan(a, n, k); });

    const Bracket b = bracket(stream, d_in, n, mode, k, p);
    stats.passes += b.passes;
    std::size_t na = 0, nb = 0;
    const std::uint64_t* src_b = p.sorted_b;
    if (b.valid <= k) {  // every valid key is selected
      na = copy_bracket(stream, d_in, n, mode, p, kInvalidKey, kInvalidKey, k, &stats)[0];
    } else if (b.lt_hi - b.le_lo > p.cap_b) {  // the bracket does not fit its buffer
      // A bracket of one key is that key, with all its ties; otherwise the exact radix path
      // finds the k-th key.
      std::optional<Threshold> known;
      if (b.hi - b.lo == 2) {
        known = Threshold{b.lo + 1, b.le_lo};
      } else {
        ++stats.retries;
      }
      exact_top_k(stream, d_in, n, mode, k, known, p, stats);
      na = k;
    } else {
      // copy_if: keys <= lo are all selected (A); the bracket (lo, hi) is compacted (B).
      const auto c = copy_bracket(stream, d_in, n, mode, p, b.lo + 1, b.hi, k, &stats);
      na = c[0];
      nb = k - na;
      sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, c[1]);
    }
    stats.count = na + nb;
    write_selection(stream, d_in, p, na, src_b, nb, req.sorted_output, out_v, out_i);
    return stats;
  }

  // One rank at a time: the method brackets a single order statistic.
  SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                               const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const override {
    SelectStats stats;
    if (!start_order_statistics(n, ranks, h_out)) return stats;
    const Plan p = lay_out(ws, stats, [&](Arena& a) { return plan(a, n, 0); });
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
        key = exact_rank_key(stream, d_in, n, mode, k, p, stats);
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
    take_pass_buffers(a, p, 2, false);
    // Beliakov's brackets held 1-5% of the input after a handful of iterations; keep n/64.
    take_ab_buffers(a, p, k, std::min<std::size_t>(n, n / 64 + 4096));
    take_scratch(a, p, objective_bytes() + radix_threshold_bytes() + (k ? extract_bytes(n) : 0));
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
    SegmentPass s = filter_pass(p, d_in, n, mode, cap_a);
    s.bounds = p.bounds;
    s.n_bounds = 2;
    s.inline_regions[0] = cap_a ? kRegionA : kRegionNone;
    s.inline_regions[1] = kRegionB;
    return run_segment_pass(stream, s, 3, *stats);
  }
};

}  // namespace

std::unique_ptr<Selector> make_cutting_plane_selector() { return std::make_unique<CuttingPlaneSelector>(); }

}  // namespace gpuclean::select

#pragma once
// The decisions of the device chain (window_select.hpp) as plain functions of a few numbers, the
// same on the host and the device: the keys, the window plan from the sample's order statistics
// and runs, the segment of a key, and where the target lies given the pass's counts. The kernels
// call these; tests/select/test_window_logic.cpp runs a model of the whole chain on the CPU
// with them.

#include <cstddef>
#include <cstdint>

#include "select/detail/rank_key.hpp"
#include "select/detail/window_select.hpp"

namespace gpuclean::select::detail {

GPUCLEAN_HD int bit_length(std::uint32_t x) {
#ifdef __CUDA_ARCH__
  return 32 - __clz(x);
#else
  return x == 0 ? 0 : 32 - __builtin_clz(x);
#endif
}

/// The ranking key of a float's bits under a chain's key (smaller is better; kInvalidKey never
/// selected).
template <WindowKey K>
GPUCLEAN_HD std::uint32_t window_key(std::uint32_t b) {
  if constexpr (K == WindowKey::kLargest) {
    return rank_key_bits<KeyMode::kLargest>(b);
  } else if constexpr (K == WindowKey::kSmallest) {
    return rank_key_bits<KeyMode::kSmallest>(b);
  } else {
    return rank_key_bits<KeyMode::kLargestAbs>(b);
  }
}

/// What the pivot kernel knows when it plans: the sample's keys at the window's ends and centre,
/// their runs (samples below and equal), and the number of valid samples.
struct PlanInputs {
  long long samples = 0, first = -1, last = 0, valid = 0;
  std::uint32_t key_first = 0, key_centre = 0, key_last = 0;
  std::uint32_t below_first = 0, equal_first = 0, below_centre = 0, equal_centre = 0, below_last = 0,
                equal_last = 0;
  float cap_samples = 0.0f;  ///< the window buffer's capacity in sample units
  bool allow_equality = true;
};

/// The window: [lo, hi] saved to B (keys below lo are selected, to A); a centre key whose copies
/// would fill half of B gets an equality window [v, v + 1), counted, not saved; heavy runs at the
/// window's ends (not the centre's) move out of it when the window would not fit otherwise (such
/// a run may hold the k-th key: then the check after the pass fails, as it would have on the
/// overflow).
GPUCLEAN_HD WindowPlan make_plan(const PlanInputs& in) {
  const bool open_lo = in.first < 0, open_hi = in.last >= in.samples;
  const std::uint32_t s_first = in.key_first, v = in.key_centre, s_last = in.key_last;
  std::uint32_t lo = open_lo ? 0u : s_first;
  std::uint32_t hi = open_hi ? kInvalidKey - 1 : (s_last < kInvalidKey - 1 ? s_last : kInvalidKey - 1);
  const float cap = in.cap_samples;
  const bool eq = in.allow_equality && v != kInvalidKey && in.equal_centre >= 2 &&
                  static_cast<float>(in.equal_centre) >= 0.5f * cap && lo <= v && v <= hi;
  const long long upto_hi =
      open_hi || s_last == kInvalidKey ? in.valid : static_cast<long long>(in.below_last) + in.equal_last;
  float est = static_cast<float>(upto_hi - (open_lo ? 0ll : static_cast<long long>(in.below_first))) -
              (eq ? static_cast<float>(in.equal_centre) : 0.0f);
  if (est > cap && !open_lo && s_first < v) {
    lo = s_first + 1;
    est -= static_cast<float>(in.equal_first);
  }
  if (est > cap && !open_hi && s_last != kInvalidKey && s_last > v) hi = s_last - 1;
  if (static_cast<unsigned long long>(lo) > static_cast<unsigned long long>(hi) + 1ull) lo = hi + 1;

  WindowPlan p{};
  p.bound[0] = lo;
  if (eq) {
    p.bound[1] = v;
    p.bound[2] = v + 1;
    p.bound[3] = hi + 1;
  } else {
    p.bound[1] = p.bound[2] = p.bound[3] = hi + 1;
  }
  p.fast_lo = 0u;  // segment 0 is saved to A: no key takes the pass's fast path below the window
  // kRegionA for segment 0, kRegionB for the window, kRegionNone for v (engine.hpp).
  p.regions = 1u | (2u << 2) | ((eq ? 0u : 2u) << 4) | (2u << 6);
  p.tie_key = v;
  p.b_lo = lo;
  p.b_hi = hi;
  p.equality = eq ? 1 : 0;
  p.open_top = hi == kInvalidKey - 1 ? 1 : 0;
  p.sample_valid = static_cast<std::int32_t>(in.valid);
  return p;
}

/// Segment 0..4 of a key: the number of bounds at or below it.
GPUCLEAN_HD int segment_of(const WindowPlan& p, std::uint32_t key) {
  return static_cast<int>(p.bound[0] <= key) + static_cast<int>(p.bound[1] <= key) +
         static_cast<int>(p.bound[2] <= key) + static_cast<int>(p.bound[3] <= key);
}

/// kRegionNone, kRegionA or kRegionB for segments 0..3; segment 4 is never saved.
GPUCLEAN_HD std::uint32_t region_of(const WindowPlan& p, int segment) {
  return segment >= 4 ? 0u : (p.regions >> (2 * segment)) & 3u;
}

/// What the pass counted.
struct PassCounts {
  unsigned long long seg[4] = {0, 0, 0, 0};
  unsigned long long fill_b = 0;
  std::uint32_t b_min_inv = 0, b_max = 0;
};

/// Where the k-th key lies. Segments: 0 below the window (A), 1 the window below v, 2 v
/// (equality windows; empty otherwise), 3 the window above v; 4 above the window and invalid.
GPUCLEAN_HD WindowResolve resolve_counts(unsigned long long k, unsigned long long cap_a, unsigned long long cap_b,
                                         bool have_tiles, int index_bits, const WindowPlan& pl, const PassCounts& c) {
  WindowResolve r{};
  const unsigned long long c0 = c.seg[0], c1 = c.seg[1], c2 = c.seg[2], c3 = c.seg[3];
  const unsigned long long counted = c0 + c1 + c2 + c3;
  r.nb = c.fill_b;
  // Digits over B's actual key range (an open window end would otherwise stretch it to 0).
  r.b_lo = ~c.b_min_inv;
  r.total_bits = (c.b_max > r.b_lo ? bit_length(c.b_max - r.b_lo) : 0) + index_bits;
  r.cand = ~0ull;  // set by the digit-bin search when select_b
  if (counted < k) {
    if (!pl.open_top) {
      r.status = kWindowMissHigh;
      return r;
    }
    r.need_b = c1 + c3;  // fewer valid keys than k: every one
    r.need_v = c2;
  } else if (c0 >= k) {
    r.status = kWindowMissLow;
    return r;
  } else if (k <= c0 + c1) {
    r.need_b = k - c0;
  } else if (k <= c0 + c1 + c2) {
    r.need_b = c1;
    r.need_v = k - c0 - c1;
  } else {
    r.need_b = k - c0 - c2;
    r.need_v = c2;
  }
  r.a_count = c0;
  if (c0 > cap_a || (r.need_v > 0 && !have_tiles)) r.status = kWindowOverflow;
  // B holds exactly c1 + c3 keys unless it overflowed (then its fill passed the capacity).
  const bool b_needed = r.need_b > 0;
  if (b_needed && (r.nb > cap_b || r.need_b > r.nb)) r.status = kWindowOverflow;
  r.select_b = b_needed && r.need_b < r.nb;
  r.emit_all_b = b_needed && r.need_b == r.nb;
  r.total = r.a_count + r.need_b + r.need_v;
  return r;
}

/// rel orders B's composites as (key, index) does, in total_bits bits from B's smallest key.
GPUCLEAN_HD unsigned long long rel_of(std::uint64_t c, std::uint32_t b_lo, int index_bits) {
  return (static_cast<unsigned long long>(composite_key(c) - b_lo) << index_bits) | composite_index(c);
}

/// Bits of an index below n (at least 1, at most 32).
inline int index_bits_for(std::size_t n) {
  int bits = 1;
  while (bits < 32 && (std::size_t{1} << bits) < n) ++bits;
  return bits;
}

}  // namespace gpuclean::select::detail

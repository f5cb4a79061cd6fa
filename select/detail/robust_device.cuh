#pragma once
// Device helpers shared by the fused robust statistics' kernels (CUDA only).

#include <math_constants.h>

#include <cstddef>
#include <cstdint>

#include "select/detail/rank_key.hpp"
#include "select/detail/robust_fused_kernels.hpp"

namespace gpuclean::select::detail {

inline constexpr std::uint32_t kMinFiniteKey = 0x00800000u;  // ascending_bits(-FLT_MAX)
inline constexpr std::uint32_t kMaxFiniteKey = 0xFF7FFFFFu;  // ascending_bits(FLT_MAX)

/// First index of sorted a[0, n) whose value is >= key, found by one warp in 32-way steps (a
/// handful of dependent loads instead of twenty). Every lane gets it.
__device__ inline std::size_t warp_lower_bound(const std::uint32_t* a, std::size_t n, std::uint32_t key) {
  const unsigned lane = threadIdx.x & 31;
  std::size_t lo = 0, hi = n;
  while (hi - lo > 32) {
    const std::size_t step = (hi - lo + 31) / 32;
    const std::size_t p = lo + lane * step;
    const unsigned below = __ballot_sync(0xffffffffu, p < hi && a[p] < key);
    const int t = __popc(below);  // probes 0 .. t-1 are below the key
    if (t == 0) return lo;
    const std::size_t last = lo + static_cast<std::size_t>(t - 1) * step;
    hi = min(hi, last + step);
    lo = last + 1;
  }
  const std::size_t p = lo + lane;
  return lo + __popc(__ballot_sync(0xffffffffu, p < hi && a[p] < key));
}

/// Half-width, in sample ranks, of a bracket around the sample median of s samples: the
/// population median's rank in the sample is binomial with standard deviation sqrt(s) / 2.
__device__ inline long long bracket_half_width(long long s, double z) {
  return static_cast<long long>(ceil(z * sqrt(static_cast<double>(s)) * 0.5)) + 1;
}

/// Completes a bracket whose lo/hi keys and sample MAD bracket [dlo, dhi] are known: the
/// widened MAD bracket and the pass's thresholds, all with directed rounding.
__device__ inline void finish_bracket(RobustBracket& b, float dlo, float dhi) {
  b.lo = from_ascending_bits(b.lo_key);
  b.hi = from_ascending_bits(b.hi_key);
  b.fixed = b.lo_key == b.hi_key;
  if (!b.fixed) {
    // The exact median may lie anywhere in [lo, hi], which moves each deviation by up to hi - lo;
    // the MAD moves by less (not at all for symmetric data): half of it keeps the band narrow.
    const float half = 0.5f * __fsub_ru(b.hi, b.lo);
    dlo = fmaxf(0.0f, __fsub_rd(dlo, half));
    dhi = __fadd_ru(dhi, half);
    b.inner_lo = __fsub_ru(b.hi, dlo);
    b.inner_hi = __fadd_rd(b.lo, dlo);
    b.far_lo = __fsub_rd(b.lo, dhi);
    b.far_hi = __fadd_ru(b.hi, dhi);
  }
  b.dlo = dlo;
  b.dhi = dhi;
}

}  // namespace gpuclean::select::detail

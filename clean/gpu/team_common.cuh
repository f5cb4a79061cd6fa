#pragma once
// What the one-plane teams of team_kernel.cu share (CUDA only): the packed member key, the
// record flush with the budget cutoff, the --local-rms flux rules and the block's own shared state.

#include <cstdint>

#include "clean/gpu/budget_cutoff.cuh"
#include "clean/gpu/minor_types.hpp"
#include "clean/packed_peak.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::clean::gpu {

// A member's key packed with an index that is monotone in pixel order (its slot in the cluster,
// or y << 16 | x), so that the largest packed value is the brightest member with the lowest
// pixel, as in the CPU reference. A NaN (only an overflowing, non-converging run makes one) is
// never the best, as on the CPU.
__device__ __forceinline__ unsigned long long pack_slot(float v, std::uint32_t slot, bool abs_key) {
  return v != v ? 0ull : pack_peak(abs_key ? fabsf(v) : v, slot, v < 0.0f);
}

// Writes a warp's buffered records (lane i holds record i, i < n) to the pool and counts their
// orders. Warp-uniform result, false when the team must stop: the pool is full, or another team
// found it full (then every team stops and the host runs the cycle again with a larger pool), or
// the budget cutoff shows that no record after `current` (the team's running order) can be kept.
__device__ inline bool flush_records(const TeamArgs& a, std::uint32_t top, std::uint32_t n, std::uint32_t pixel,
                                     float flux, unsigned long long order, unsigned long long current,
                                     std::uint32_t lane) {
  using cuda::kFullMask;
  unsigned long long base = 0;
  bool stop = false;
  if (lane == 0) {
    stop = *static_cast<volatile unsigned int*>(&a.counters->overflow) != 0;
    if (!stop) {
      base = atomicAdd(&a.counters->records, static_cast<unsigned long long>(n));
      if (base + n > a.pool_capacity) {
        atomicExch(&a.counters->overflow, 1u);
        stop = true;
      }
    }
  }
  stop = __shfl_sync(kFullMask, stop, 0);
  base = __shfl_sync(kFullMask, base, 0);
  if (stop) return false;
  if (lane < n) {
    a.rec_pixel[base + lane] = pixel;
    a.rec_flux[base + lane] = flux;
    a.rec_order[base + lane] = order;
    count_order(a.order_bins, top, order);
  }
  return base + n < a.budget || !past_budget(a.order_bins, top, current, a.budget, lane);
}

// The team's next component from its members' maximum `best`, in `p`; false when the chain ends:
// no cleanable member, `stop` (the pool is full or the cutoff fired), the budget made, or the peak
// at Clark's limit.
__device__ __forceinline__ bool next_peak(const TeamArgs& a, unsigned long long best, bool stop, std::uint32_t made,
                                          bool abs_key, UnpackedPeak& p) {
  if (best == 0 || stop || made >= a.budget) return false;
  p = unpack_peak(best, abs_key);
  return static_cast<double>(p.key) > a.limit;
}

// --local-rms: a component's flux from its weighed value, and its weighed share at a member
// (MinorCycleCpu's rounding); without weights, the plain rule. xy = y << 16 | x.
__device__ __forceinline__ float component_flux(const TeamArgs& a, float value, std::uint32_t pixel) {
  return a.weights ? __fmul_rn(a.gain, __fdiv_rn(value, __ldg(a.weights + pixel))) : __fmul_rn(a.gain, value);
}
__device__ __forceinline__ float member_flux(const TeamArgs& a, float flux, std::uint32_t xy) {
  return a.weights ? __fmul_rn(flux, __ldg(a.weights + (xy >> 16) * a.width + (xy & 0xFFFFu))) : flux;
}

// A warp's records of the current group of 32 (lane i holds record i), written to the pool by
// flush_records when the group is full and once more at the end.
struct WarpRecords {
  std::uint32_t pixel = 0;
  float flux = 0.0f;
  unsigned long long order = 0;
  // Component number `made`: lane made % 32 keeps it.
  __device__ __forceinline__ void keep(std::uint32_t made, std::uint32_t lane, std::uint32_t p, float f,
                                       unsigned long long o) {
    if (lane == (made & 31)) {
      pixel = p;
      flux = f;
      order = o;
    }
  }
  // The first n records to the pool; `current` is the team's running order (flush_records).
  __device__ __forceinline__ bool flush(const TeamArgs& a, std::uint32_t top, std::uint32_t n,
                                        unsigned long long current, std::uint32_t lane) const {
    return flush_records(a, top, n, pixel, flux, order, current, lane);
  }
};

// The team's component number `made`, at (bx, by) with the peak `p`: its flux (returned), the
// team's running order, and its record, kept by the `writer` warp, whose records go to the pool
// every 32 (`room` false once the team must stop).
__device__ __forceinline__ float take_component(const TeamArgs& a, std::uint32_t top, int bx, int by,
                                                const UnpackedPeak& p, bool writer, std::uint32_t lane,
                                                WarpRecords& rec, std::uint32_t& made, unsigned long long& order,
                                                bool& room) {
  const std::uint32_t pixel = static_cast<std::uint32_t>(by) * a.width + static_cast<std::uint32_t>(bx);
  const float flux = component_flux(a, p.value, pixel);
  order = min(order, pack_peak(p.key, pixel, p.value < 0.0f));
  if (writer) rec.keep(made, lane, pixel, flux, order);
  ++made;
  if (writer && (made & 31) == 0 && room) room = rec.flush(a, top, 32, order, lane);
  return flux;
}


struct BlockShared {
  unsigned long long best[2][32];  // per-warp maxima, double-buffered: one barrier per component
  unsigned int stop[2];
  unsigned int item;
};

}  // namespace gpuclean::clean::gpu

// The fused robust statistics' pass and finish (robust_fused.hpp explains the method).

#include "select/detail/robust_fused_kernels.hpp"

#include <math_constants.h>

#include <algorithm>

#include "select/cuda/cuda_check.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/rank_key.hpp"
#include "select/detail/robust_device.cuh"

namespace gpuclean::select::detail {
namespace {

constexpr int kPassThreads = 256;
constexpr int kPerThread = 16;
constexpr int kTile = kPassThreads * kPerThread;
constexpr int kWarps = kPassThreads / 32;
constexpr int kWarpStage = 512;  // entries per warp and buffer, flushed when another append may not fit

// One warp's candidates for one output, staged in its own shared memory: appends cost a ballot
// and a store (the fill is a register, the same in every lane), and a flush, one global atomic
// per ~480 candidates, with no block-wide barrier.
struct WarpStage {
  std::uint32_t* buf;  // this warp's kWarpStage entries
  int fill = 0;
  std::uint32_t* out;
  unsigned long long cap;
  unsigned long long* global_fill;

  __device__ void flush() {
    __syncwarp();
    const int lane = static_cast<int>(threadIdx.x & 31);
    unsigned long long base = 0;
    if (lane == 0 && fill) base = atomicAdd(global_fill, static_cast<unsigned long long>(fill));
    base = __shfl_sync(0xffffffffu, base, 0);
    for (int i = lane; i < fill; i += 32)
      if (base + i < cap) out[base + i] = buf[i];
    __syncwarp();
    fill = 0;
  }
  // Collective: every lane of the warp calls it.
  __device__ void append(bool want, std::uint32_t v) {
    const unsigned mask = __ballot_sync(0xffffffffu, want);
    if (mask == 0) return;
    const int lane = static_cast<int>(threadIdx.x & 31);
    if (want) buf[fill + __popc(mask & ((1u << lane) - 1))] = v;
    fill += __popc(mask);
    if (fill > kWarpStage - 32) flush();
  }
};

struct PassCounters {
  unsigned valid = 0, below = 0, eq_lo = 0, eq_hi = 0, dev_low = 0, dev_eq_lo = 0, dev_eq_hi = 0;
};

// Most elements only add to counters, without branches; the few candidates are appended.
enum class PassMode { kRank, kFixed, kGeneral };

template <PassMode kMode>
__device__ void classify(float x, const RobustBracket& b, PassCounters& c, WarpStage& median, WarpStage& band) {
  const bool f = kMode == PassMode::kRank ? !isnan(x) : isfinite(x);
  const std::uint32_t k = ascending_bits(x);
  c.valid += f;
  c.below += f & (k < b.lo_key);
  c.eq_lo += f & (k == b.lo_key);
  c.eq_hi += f & (k == b.hi_key) & (k != b.lo_key);
  median.append(f & (k > b.lo_key) & (k < b.hi_key), k);
  if constexpr (kMode == PassMode::kFixed) {
    const float d = fabsf(x - b.lo);
    c.dev_low += f & (d < b.dlo);
    c.dev_eq_lo += f & (d == b.dlo);
    c.dev_eq_hi += f & (d == b.dhi) & (d != b.dlo);
    band.append(f & (d > b.dlo) & (d < b.dhi), ascending_bits(d));
  } else if constexpr (kMode == PassMode::kGeneral) {
    const bool inner = (x >= b.inner_lo) & (x <= b.inner_hi);
    c.dev_low += f & inner;
    band.append(f & !inner & (x > b.far_lo) & (x < b.far_hi), __float_as_uint(x));
  }
}

__device__ void add_block(unsigned v, unsigned* s_sum) {
  v = __reduce_add_sync(0xffffffffu, v);
  if ((threadIdx.x & 31) == 0 && v) atomicAdd(s_sum, v);
}

template <PassMode kMode>
__device__ void pass_body(const RobustPassArgs& a, const RobustBracket& b, std::uint32_t (*s_median)[kWarpStage],
                          std::uint32_t (*s_band)[kWarpStage], unsigned* s_sums) {
  if (threadIdx.x < 7) s_sums[threadIdx.x] = 0;
  const int warp = static_cast<int>(threadIdx.x >> 5);
  WarpStage median{s_median[warp], 0, a.median_out, a.median_cap, &a.counts->median_fill};
  WarpStage band{s_band[warp], 0, a.band_out, a.band_cap, &a.counts->band_fill};
  PassCounters c;
  const std::size_t tiles = (a.n + kTile - 1) / kTile;
  for (std::size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::size_t base = t * kTile + threadIdx.x;
    float x[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const std::size_t i = base + static_cast<std::size_t>(j) * kPassThreads;
      x[j] = i < a.n ? __ldg(a.in + i) : CUDART_NAN_F;
    }
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) classify<kMode>(x[j], b, c, median, band);
  }
  median.flush();
  band.flush();
  __syncthreads();  // s_sums zeroed
  const unsigned mine[7] = {c.valid, c.below, c.eq_lo, c.eq_hi, c.dev_low, c.dev_eq_lo, c.dev_eq_hi};
#pragma unroll
  for (int i = 0; i < 7; ++i) add_block(mine[i], &s_sums[i]);
  __syncthreads();
  if (threadIdx.x < 7 && s_sums[threadIdx.x]) {
    unsigned long long* const targets[7] = {&a.counts->valid,  &a.counts->below,     &a.counts->eq_lo,
                                            &a.counts->eq_hi,   &a.counts->dev_low,   &a.counts->dev_eq_lo,
                                            &a.counts->dev_eq_hi};
    atomicAdd(targets[threadIdx.x], static_cast<unsigned long long>(s_sums[threadIdx.x]));
  }
}

__global__ void __launch_bounds__(kPassThreads) pass_kernel(RobustPassArgs a) {
  __shared__ std::uint32_t s_median[kWarps][kWarpStage], s_band[kWarps][kWarpStage];
  __shared__ unsigned s_sums[7];
  const RobustBracket b = *a.bracket;
  if (b.rank_only) pass_body<PassMode::kRank>(a, b, s_median, s_band, s_sums);
  else if (b.fixed) pass_body<PassMode::kFixed>(a, b, s_median, s_band, s_sums);
  else pass_body<PassMode::kGeneral>(a, b, s_median, s_band, s_sums);
}

__device__ std::uint32_t median_key_of(const RobustFinishArgs& a) {
  return a.median_index >= 0 ? a.median_sorted[a.median_index] : a.median_key;
}

__global__ void band_deviation_kernel(const std::uint32_t* values, std::size_t count, RobustFinishArgs a,
                                      std::uint32_t* out) {
  const float m = from_ascending_bits(median_key_of(a));
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = ascending_bits(fabsf(__uint_as_float(values[i]) - m));
}

// kSearch: every inner deviation is <= dlo and every far one >= dhi, so the deviations strictly
// inside (dlo, dhi) are exactly the band's there, and their ranks follow from the counts. One warp.
__global__ void finish_kernel(RobustFinishArgs a, RobustAnswer* out) {
  RobustAnswer r{1, median_key_of(a), a.mad_key};
  if (a.mad_source == MadSource::kIndex) {
    r.mad_key = a.band_sorted[a.mad_index];
  } else if (a.mad_source == MadSource::kSearch) {
    const float dlo = a.bracket->dlo, dhi = a.bracket->dhi;
    const unsigned long long low = warp_lower_bound(a.band_sorted, a.band_count, ascending_bits(dlo) + 1);
    const unsigned long long high = warp_lower_bound(a.band_sorted, a.band_count, ascending_bits(dhi));
    if (a.inner + low <= a.rank && a.rank < a.inner + high) {
      r.mad_key = a.band_sorted[a.rank - a.inner];
    } else if (a.rank < a.inner + low && dlo == 0.0f) {
      r.mad_key = ascending_bits(0.0f);  // at least rank + 1 deviations are <= 0
    } else {
      r.ok = 0;
    }
  }
  if (threadIdx.x == 0) *out = r;
}

unsigned grid_for(std::size_t count) {
  return static_cast<unsigned>(std::clamp<std::size_t>((count + 255) / 256, 1, 4096));
}

}  // namespace

void robust_pass(cudaStream_t stream, const RobustPassArgs& a) {
  const std::size_t tiles = (a.n + kTile - 1) / kTile;
  const auto grid = static_cast<unsigned>(std::clamp<std::size_t>(tiles, 1, streaming_blocks()));
  pass_kernel<<<grid, kPassThreads, 0, stream>>>(a);
  GPUCLEAN_CHECK_LAUNCH();
}

void robust_band_deviations(cudaStream_t stream, const std::uint32_t* band_values, std::size_t count,
                            const RobustFinishArgs& median, std::uint32_t* out) {
  if (count == 0) return;
  band_deviation_kernel<<<grid_for(count), 256, 0, stream>>>(band_values, count, median, out);
  GPUCLEAN_CHECK_LAUNCH();
}

void robust_finish(cudaStream_t stream, const RobustFinishArgs& a, RobustAnswer* out) {
  finish_kernel<<<1, 32, 0, stream>>>(a, out);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::select::detail

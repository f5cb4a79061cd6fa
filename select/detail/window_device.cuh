#pragma once
// Warp- and block-wide device helpers shared by the window chain's kernels (CUDA only). The
// block-wide ones are collectives: every thread of the block calls them and gets the result.

#include <cstdint>

#include "select/cuda/warp_util.cuh"

namespace gpuclean::select::detail {

__device__ __forceinline__ unsigned lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// ---- block-wide helpers (every thread calls; results in every thread) ----

// Sums kN values over the block. The two halves of `s` alternate between calls, so that one
// barrier per call suffices: a warp can only write a half again after every warp has passed
// the barrier that follows its reads of it.
template <int kN>
__device__ __forceinline__ void block_sum(unsigned (&v)[kN], unsigned (*s)[32][8], int& parity) {
  static_assert(kN <= 8, "eight values at most");
  const int w = static_cast<int>(threadIdx.x >> 5), ln = lane_id(), nw = static_cast<int>(blockDim.x >> 5);
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const unsigned t = __reduce_add_sync(kFullMask, v[j]);
    if (ln == 0) s[parity][w][j] = t;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kN; ++j) v[j] = __reduce_add_sync(kFullMask, ln < nw ? s[parity][ln][j] : 0u);
  parity ^= 1;
}

__device__ __forceinline__ void block_min_max(unsigned& mn, unsigned& mx, unsigned (*s)[32][8], int& parity) {
  const int w = static_cast<int>(threadIdx.x >> 5), ln = lane_id(), nw = static_cast<int>(blockDim.x >> 5);
  mn = __reduce_min_sync(kFullMask, mn);
  mx = __reduce_max_sync(kFullMask, mx);
  if (ln == 0) {
    s[parity][w][0] = mn;
    s[parity][w][1] = mx;
  }
  __syncthreads();
  mn = __reduce_min_sync(kFullMask, ln < nw ? s[parity][ln][0] : 0xFFFFFFFFu);
  mx = __reduce_max_sync(kFullMask, ln < nw ? s[parity][ln][1] : 0u);
  parity ^= 1;
}

__device__ __forceinline__ void block_min_max64(std::uint64_t& mn, std::uint64_t& mx, std::uint64_t (*s)[32][2],
                                                int& parity) {
  const int w = static_cast<int>(threadIdx.x >> 5), ln = lane_id(), nw = static_cast<int>(blockDim.x >> 5);
  for (int o = 16; o > 0; o >>= 1) {
    mn = min(mn, __shfl_xor_sync(kFullMask, mn, o));
    mx = max(mx, __shfl_xor_sync(kFullMask, mx, o));
  }
  if (ln == 0) {
    s[parity][w][0] = mn;
    s[parity][w][1] = mx;
  }
  __syncthreads();
  mn = ln < nw ? s[parity][ln][0] : ~0ull;
  mx = ln < nw ? s[parity][ln][1] : 0ull;
  for (int o = 16; o > 0; o >>= 1) {
    mn = min(mn, __shfl_xor_sync(kFullMask, mn, o));
    mx = max(mx, __shfl_xor_sync(kFullMask, mx, o));
  }
  parity ^= 1;
}

// True in every thread of the grid's last block to get here; its earlier blocks' writes are
// then visible to it (each thread fences its own writes before the barrier and the ticket).
__device__ __forceinline__ bool last_block(unsigned* ticket, int& s_last) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) s_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (s_last) __threadfence();
  return s_last != 0;
}

// Reserves one slot per wanting lane on `counter`, one atomic per warp. All lanes call.
__device__ __forceinline__ unsigned long long warp_reserve(bool want, unsigned long long* counter) {
  const unsigned m = __ballot_sync(kFullMask, want);
  if (m == 0) return 0;
  const int leader = __ffs(m) - 1;
  unsigned long long base = 0;
  if (lane_id() == leader) base = atomicAdd(counter, static_cast<unsigned long long>(__popc(m)));
  base = __shfl_sync(kFullMask, base, leader);
  return base + static_cast<unsigned>(__popc(m & lanemask_lt()));
}

}  // namespace gpuclean::select::detail

#pragma once
// A warp's search of a sorted member list (CUDA only), shared by the one-plane and joined teams.

#include <cstdint>

#include "select/cuda/warp_util.cuh"

namespace gpuclean::clean::gpu {

// First position in xy[0, m) holding a value >= key (xy ascending), by a 32-way search: each
// round the lanes probe the ends of 32 segments and a ballot keeps the one that straddles key.
// All lanes of the warp call it and get the same answer.
__device__ __forceinline__ std::uint32_t warp_lower_bound(const std::uint32_t* xy, std::uint32_t m,
                                                          std::uint32_t key, std::uint32_t lane) {
  using cuda::kFullMask;
  std::uint32_t lo = 0, end = m;
  while (end - lo > 32) {
    const std::uint32_t step = (end - lo + 31) >> 5;
    const std::uint32_t p = lo + (lane + 1) * step - 1;
    const bool below = p < end && xy[p] < key;
    const std::uint32_t whole = __popc(__ballot_sync(kFullMask, below));
    const std::uint32_t next = lo + whole * step;
    end = min(end, next + step);
    lo = min(next, end);
  }
  const bool below = lo + lane < end && xy[lo + lane] < key;
  return lo + __popc(__ballot_sync(kFullMask, below));
}

}  // namespace gpuclean::clean::gpu

#pragma once
// The budget cutoff of the clustered minor cycle (CUDA only). Every cluster runs its own Högbom,
// and the merge keeps the `budget` records of highest order (the running minimum of the packed
// peaks; interaction_clusters.hpp). So a cluster may stop as soon as `budget` records of strictly
// higher order than its current one exist: its later records have lower orders and none of them
// could be kept. Without it, a cycle cut by niter ran every cluster down to the limit, and the
// longest chain made far more components than the merge kept.
//
// The recorded orders are counted in a histogram of kOrderBins (minor_types.hpp) bins, each 1/64 of an octave of
// the key (the ordered key bits >> kOrderShift), the top bin holding the cycle's peak key
// (MinorCounters::peak_key). Orders more than 16 octaves below the peak share bin 0, where the
// cutoff never fires. A count over the bins strictly above the current order's bin is a lower
// bound of the records that beat it, so the rule is conservative and the merge stays exact.

#include <cstdint>

#include "clean/gpu/minor_types.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::clean::gpu {

inline constexpr int kOrderShift = 17;

/// The bin of an order, given top = peak_key >> kOrderShift. An order never exceeds the peak: the
/// first record of a cluster is at most its brightest member, and the orders only decrease.
__device__ __forceinline__ std::uint32_t order_bin(unsigned long long order, std::uint32_t top) {
  const std::uint32_t c = static_cast<std::uint32_t>(order >> 32) >> kOrderShift;
  const std::uint32_t below = c >= top ? 0u : top - c;
  return below >= kOrderBins ? 0u : kOrderBins - 1 - below;
}

/// Counts one record's order (no return value: a fire-and-forget reduction in L2).
__device__ __forceinline__ void count_order(unsigned int* bins, std::uint32_t top, unsigned long long order) {
  atomicAdd(bins + order_bin(order, top), 1u);
}

/// Warp-collective: whether at least `budget` counted records beat every order of `order`'s bin
/// and below. The counts are read from L2, where the other SMs' additions land.
__device__ __forceinline__ bool past_budget(const unsigned int* bins, std::uint32_t top, unsigned long long order,
                                            std::uint32_t budget, std::uint32_t lane) {
  unsigned int above = 0;
#pragma unroll 4
  for (std::uint32_t j = order_bin(order, top) + 1 + lane; j < kOrderBins; j += 32) above += __ldcg(bins + j);
  return __reduce_add_sync(cuda::kFullMask, above) >= budget;
}

}  // namespace gpuclean::clean::gpu

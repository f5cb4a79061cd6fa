#pragma once
// The robust noise estimate (median and MAD of the finite values) in one read of the input.
//
// A random sample brackets both answers: [lo, hi] around the median, [dlo, dhi] around the MAD
// of the sample's deviations from its own median. One pass then counts, for every finite x,
// where it falls against both brackets and keeps only the few elements that can still be either
// answer; small sorts of those finish. Every count is exact and every class is decided with
// directed rounding, so whether a bracket held is known for certain: when it did not (about
// 1 - p_k of calls), the caller falls back to an exact path. Results are bit for bit those of
// clean::robust_sigma: the median at rank (n_finite - 1) / 2 and the same rank of
// fabsf(x - median) computed in float.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "select/selector.hpp"

namespace gpuclean::select::detail {

struct RobustPlan {
  std::size_t samples = 0;    ///< S: sample size, a power of two
  double z = 0.0;             ///< half-width of each bracket in standard deviations of a sample rank
  std::size_t median_cap = 0;  ///< room for the elements strictly inside [lo, hi]
  std::size_t band_cap = 0;    ///< room for the elements whose deviation may fall in [dlo, dhi]
};

/// The plan for n elements: S about 32 sqrt(n) within [2^12, 2^20], brackets of z standard
/// deviations, buffers for twice the expected counts.
/// Without `deviations` (one order statistic), no band.
RobustPlan robust_plan(std::size_t n, double z, bool deviations = true);
std::size_t fused_robust_bytes(std::size_t n, double z);
std::size_t fused_rank_bytes(std::size_t n, double z);

/// The estimate, or nullopt when a bracket missed or a buffer overflowed (nothing is returned
/// that was not verified). Synchronizes `stream` twice. `stats` gets passes, scratch.
std::optional<RobustStats> fused_robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                                   Workspace& ws, double z, std::uint64_t seed,
                                                   SelectStats* stats);

/// The same method for one order statistic: the value at 0-based `rank` among the non-NaN values
/// (+-Inf included), NaN when there are not that many; nullopt when the bracket missed.
std::optional<float> fused_order_statistic(cudaStream_t stream, const float* d_in, std::size_t n, std::size_t rank,
                                           Workspace& ws, double z, std::uint64_t seed, SelectStats* stats);

}  // namespace gpuclean::select::detail

#pragma once
// The kernels of the fused robust statistics (robust_fused.hpp) and the records they share with
// the host. Keys are ascending keys (rank_key.hpp); finite values only.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuclean::select::detail {

/// Written on the device from the sorted sample; read by the pass and, after it, by the host.
struct RobustBracket {
  std::uint32_t lo_key = 0, hi_key = 0;  ///< the median's bracket, inclusive
  float lo = 0, hi = 0;                  ///< their values
  float centre = 0;                      ///< the sample's median, the centre of its deviations
  float dlo = 0, dhi = 0;                ///< the MAD's bracket
  /// lo < hi: x in [inner_lo, inner_hi] has |x - m| <= dlo and x <= far_lo or x >= far_hi has
  /// |x - m| >= dhi for every m in [lo, hi] (directed rounding makes both certain).
  float inner_lo = 0, inner_hi = 0, far_lo = 0, far_hi = 0;
  int fixed = 0;  ///< lo == hi: a median inside the bracket is lo, and the pass knows each deviation
  int sample_finite = 0;
  int rank_only = 0;  ///< one order statistic of the non-NaN values (+-Inf included), no deviations
};

/// The pass's exact counts over the valid values: the finite ones (rank_only: the non-NaN ones).
/// Median classes by key: below lo, equal to lo, strictly inside (kept), equal to hi. Deviation
/// classes: when fixed, d < dlo, d == dlo, inside (kept, as keys of d), d == dhi; otherwise inner
/// (counted in dev_low) and the band (kept, as the values x, whose deviation needs the exact
/// median).
struct RobustCounts {
  unsigned long long valid, below, eq_lo, eq_hi, median_fill;
  unsigned long long dev_low, dev_eq_lo, dev_eq_hi, band_fill;
};

struct RobustPassArgs {
  const float* in;
  std::size_t n;
  const RobustBracket* bracket;
  RobustCounts* counts;
  std::uint32_t* median_out;
  unsigned long long median_cap;
  std::uint32_t* band_out;
  unsigned long long band_cap;
};

/// What the finish kernel reads: where the median is (a key, or an index into the sorted
/// median candidates), and how to find the MAD.
enum class MadSource : int { kKey = 0, kIndex = 1, kSearch = 2 };
struct RobustFinishArgs {
  const std::uint32_t* median_sorted = nullptr;
  long long median_index = -1;  ///< -1: median_key
  std::uint32_t median_key = 0;
  const std::uint32_t* band_sorted = nullptr;
  unsigned long long band_count = 0;
  MadSource mad_source = MadSource::kKey;
  std::uint32_t mad_key = 0;
  unsigned long long mad_index = 0;  ///< kIndex
  unsigned long long inner = 0, rank = 0;  ///< kSearch
  const RobustBracket* bracket = nullptr;
};
struct RobustAnswer {
  int ok;
  std::uint32_t median_key, mad_key;
};

/// Both brackets from the sorted sample keys (one warp).
void robust_brackets(cudaStream_t stream, const std::uint32_t* sorted_sample, std::size_t samples, double z,
                     RobustBracket* bracket);
/// rank_only: the bracket around 0-based `rank` of the n values' non-NaN ones (one warp).
void rank_bracket(cudaStream_t stream, const std::uint32_t* sorted_sample, std::size_t samples, double z,
                  std::size_t rank, std::size_t n, RobustBracket* bracket);
/// The one read of the input. `counts` must be zeroed first.
void robust_pass(cudaStream_t stream, const RobustPassArgs& a);
/// Keys of fabsf(x - median) for the band's values (the median as the finish args give it).
void robust_band_deviations(cudaStream_t stream, const std::uint32_t* band_values, std::size_t count,
                            const RobustFinishArgs& median, std::uint32_t* out);
/// The answer (one thread).
void robust_finish(cudaStream_t stream, const RobustFinishArgs& a, RobustAnswer* out);

}  // namespace gpuclean::select::detail

// The fused robust statistics' brackets, read off the sorted sample by one warp
// (robust_fused.hpp).

#include <algorithm>

#include "select/cuda/cuda_check.hpp"
#include "select/detail/robust_device.cuh"

namespace gpuclean::select::detail {
namespace {

// The k-th smallest (0-based) deviation |y - centre| of the sorted finite sample y[0, s), centre
// = y[c]: the deviations of y[c..] ascend, and so do those of y[..c) read backwards (float
// subtraction is monotone), so this is the k-th of two sorted sequences, found by a binary
// search over how many come from the left one.
__device__ float kth_deviation(const std::uint32_t* y, long long s, long long c, long long k) {
  const float centre = from_ascending_bits(y[c]);
  const long long nl = c, nr = s - c;
  auto left = [&](long long i) { return fabsf(from_ascending_bits(y[c - 1 - i]) - centre); };
  auto right = [&](long long j) { return fabsf(from_ascending_bits(y[c + j]) - centre); };
  // a = how many of the k + 1 smallest come from the left: the first a with left(a) >= right(k - a).
  long long lo = k + 1 > nr ? k + 1 - nr : 0, hi = k + 1 < nl ? k + 1 : nl;
  while (lo < hi) {
    const long long a = (lo + hi) / 2;
    if (left(a) < right(k - a)) lo = a + 1; else hi = a;
  }
  // The k-th is the larger of the last taken from each side (deviations are >= 0).
  return fmaxf(lo > 0 ? left(lo - 1) : 0.0f, lo <= k ? right(k - lo) : 0.0f);
}

// Non-finite keys sort to both ends of the sample (-Inf first; +Inf and NaN last).
__global__ void brackets_kernel(const std::uint32_t* sorted, std::size_t samples, double z, RobustBracket* br) {
  const std::size_t first = warp_lower_bound(sorted, samples, kMinFiniteKey);
  const std::size_t end = warp_lower_bound(sorted, samples, kMaxFiniteKey + 1);
  if (threadIdx.x != 0) return;
  const std::uint32_t* y = sorted + first;
  const long long s = static_cast<long long>(end - first);
  RobustBracket b;
  b.sample_finite = static_cast<int>(s);
  b.lo_key = kMinFiniteKey;
  b.hi_key = kMaxFiniteKey;
  float dlo = 0.0f, dhi = CUDART_INF_F;
  if (s > 0) {
    const long long c = (s - 1) / 2, w = bracket_half_width(s, z);
    b.centre = from_ascending_bits(y[c]);
    if (c - w >= 0) {
      b.lo_key = y[c - w];
      dlo = kth_deviation(y, s, c, c - w);
    }
    if (c + w < s) {
      b.hi_key = y[c + w];
      dhi = kth_deviation(y, s, c, c + w);
    }
  }
  finish_bracket(b, dlo, dhi);
  *br = b;
}

// The sample rank of the value at `rank` is about rank x (valid samples / valid values), with
// binomial spread; the count of valid values is estimated from the sample too (the pass counts it
// exactly, and the host checks the bracket against that count).
__global__ void rank_bracket_kernel(const std::uint32_t* sorted, std::size_t samples, double z, std::size_t rank,
                                    std::size_t n, RobustBracket* br) {
  const std::size_t valid = warp_lower_bound(sorted, samples, kInvalidKey);
  if (threadIdx.x != 0) return;
  RobustBracket b;
  b.rank_only = 1;
  b.sample_finite = static_cast<int>(valid);
  b.lo_key = 0;
  b.hi_key = kInvalidKey - 1;
  if (valid > 0) {
    const double s = static_cast<double>(valid);
    const double p = fmin(1.0, static_cast<double>(rank) / (static_cast<double>(n) * s / static_cast<double>(samples)));
    const auto c = static_cast<long long>(p * (s - 1.0) + 0.5);
    const auto w = static_cast<long long>(ceil(z * sqrt(s * p * (1.0 - p) + 1.0))) + 1;
    if (c - w >= 0) b.lo_key = sorted[c - w];
    if (c + w < static_cast<long long>(valid)) b.hi_key = sorted[c + w];
  }
  b.lo = from_ascending_bits(b.lo_key);
  b.hi = from_ascending_bits(b.hi_key);
  b.fixed = b.lo_key == b.hi_key;
  *br = b;
}

}  // namespace

void rank_bracket(cudaStream_t stream, const std::uint32_t* sorted_sample, std::size_t samples, double z,
                  std::size_t rank, std::size_t n, RobustBracket* bracket) {
  rank_bracket_kernel<<<1, 32, 0, stream>>>(sorted_sample, samples, z, rank, n, bracket);
  GPUCLEAN_CHECK_LAUNCH();
}

void robust_brackets(cudaStream_t stream, const std::uint32_t* sorted_sample, std::size_t samples, double z,
                     RobustBracket* bracket) {
  brackets_kernel<<<1, 32, 0, stream>>>(sorted_sample, samples, z, bracket);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::select::detail

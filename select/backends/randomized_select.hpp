#pragma once
// Two-pivot Las Vegas top-k (Monroe, Wendelberger & Michalak, HPG 2011).
//
//  1. Draw splitters: ~8 sqrt(n) keys at random positions (seeded), and sort them.
//  2. Choose two pivots: with p = k/n, the probability that the k-th key lies in splitter
//     bucket i is Binomial(S, p) at i; take the most likely bucket and widen the range
//     symmetrically until it holds the k-th key with probability at least p_k. The range's end
//     splitters are the pivots (computed on the host from n, k and S alone, so no copy back).
//  3. One pass over the input counts the three bins (below, between and above the pivots) and,
//     in the same pass, saves the first and middle bins (Monroe's "partition and save", fused
//     with the count; both fit in O(k + sqrt n) scratch).
//  4. Check: the k-th key is in the middle bin when count(first) < k <= count(first + middle).
//     Otherwise shift the pivots by the range's width, as the paper does, and count again (a
//     retry). The range only moves towards the k-th key, so the loop terminates.
//  5. Reduced selection: sort the middle bin by (key, index) and take the first k - count(first).
//
// When the middle bin overflows its buffer (a run of equal keys wider than the window: massive
// duplicates, which the paper does not treat), the call goes to SampleSelect, whose equality
// buckets handle such runs; that counts as a retry too.

#include <cstdint>
#include <memory>

#include "select/selector.hpp"

namespace gpuclean::select {

struct RandomizedTuning {
  double p_k = 0.99;                      ///< probability that the first pass succeeds
  double splitters_per_sqrt_n = 8.0;      ///< S = this x sqrt(n) (Monroe: 8)
  double order_splitters_per_sqrt_n = 32.0;  ///< more splitters for order statistics (narrower windows)
  double capacity_factor = 2.0;           ///< middle-bin buffer / expected middle-bin size
  std::size_t direct_below = 1u << 14;    ///< smaller inputs are sorted whole
  std::uint64_t seed = 0x5EEDC1EA4ull;
};

std::unique_ptr<Selector> make_randomized_selector(const RandomizedTuning& tuning);

/// The bucket window of step 2: splitter indices [first, last] (first may be -1 and last may be
/// S, meaning open ends). Exposed for tests.
struct PivotWindow {
  long long first = -1;
  long long last = 0;
};
PivotWindow binomial_pivot_window(std::size_t n, std::size_t k, std::size_t splitters, double p_k);

}  // namespace gpuclean::select

#pragma once
// Two-pivot Las Vegas top-k (Monroe, Wendelberger & Michalak, HPG 2011), chained on the device.
//
//  1. Draw splitters: S keys at random positions (seeded).
//  2. Choose two pivots: with p = k/n, the probability that the k-th key lies in splitter
//     bucket i is Binomial(S, p) at i; take the most likely bucket and widen the range
//     symmetrically until it holds the k-th key with probability at least p_k.
//  3. One pass over the input counts the bins below, inside and above the window and saves
//     the first two (Monroe's "partition and save", fused with the count).
//  4. Check that the k-th key is inside the window, and select inside it.
//
// The common path runs all of it on the device with one host synchronization at the end
// (detail/window_select.hpp): one block draws S = sqrt(n) (4096 to 16384) splitters and finds
// the pivots as order statistics of the sample; the middle bin is selected by digit bins and a
// one-block selection, not sorted. Runs of equal splitters at the target (all_equal,
// few_distinct, many_inf, narrow data) get an equality window [v, v + 1): its keys are counted,
// not saved, and the lowest-index ties are read back from the few 512-element tiles that hold
// them. When a device check fails (the k-th key outside the window, the middle bin over its
// capacity), the call runs the host-driven path below, which is exact whatever the sample:
// shift the window and count again (a retry), and give middle bins of massive duplicates to
// SampleSelect's equality buckets.
//
// Order statistics of one rank and robust_statistics (the median and MAD) read the input once
// too, in their own pass (detail/robust_fused.hpp): a sorted sample brackets the answers, the
// pass counts exactly and keeps the few candidates, small sorts finish.

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
  // The device chain (detail/window_select.hpp).
  bool device_chain = true;               ///< false: only the host-driven path
  std::size_t chain_min_samples = 4096;   ///< top-k: S = sqrt(n) rounded up to 4096, 8192 or 16384,
  std::size_t chain_max_samples = 16384;  ///< within these
};

std::unique_ptr<Selector> make_randomized_selector(const RandomizedTuning& tuning);

/// The bucket window of step 2: splitter indices [first, last] (first may be -1 and last may be
/// S, meaning open ends). Exposed for tests.
struct PivotWindow {
  long long first = -1;
  long long last = 0;
};
PivotWindow binomial_pivot_window(std::size_t n, std::size_t k, std::size_t splitters, double p_k);

/// The device chain's window for the k-th of n keys with S samples: the sample ranks of its ends
/// and centre (the most likely bucket's upper splitter), and its buffer. The count of keys
/// inside a window of w sample buckets has mean n w / (S + 1) and, near an extreme of the
/// sample, a long Gamma tail, so the buffer holds factor / 2 x (2 w + 4 sqrt(w) + 8) buckets
/// plus 1024 keys. Exposed for tests.
struct ChainWindow {
  long long first = -1, centre = 0, last = 0;
  std::size_t cap_b = 0;
};
ChainWindow chain_window(std::size_t n, std::size_t k, std::size_t samples, double p_k, double factor);
/// S of a top-k chain: sqrt(n) rounded up to 4096, 8192 or 16384, within the tuning's limits.
std::size_t chain_samples(std::size_t n, const RandomizedTuning& t);

}  // namespace gpuclean::select

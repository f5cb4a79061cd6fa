#pragma once
// The `auto` backend's decision rule, as data (RAFT's select_k does the same with a tree trained
// on benchmark runs). Host-only: it is unit-tested on the CPU, and `gpuclean bench select
// --auto-table` prints what is needed to re-derive it (docs/design/selection.md, "The auto rule").
//
// A call is described by its operation, n, k (or the number of ranks) and, for large n only, a
// data class read off a small sample of the keys: `repeated` when equal keys are common (runs of
// equal keys overflow the randomized window and send it to a second pass; SampleSelect's equality
// buckets answer them at once), `continuous` otherwise.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gpuclean::select {

enum class AutoOperation { kTopK, kOrderStatistic, kOrderStatistics, kRobustStatistics };
enum class DataClass { kContinuous, kRepeated };

inline std::string_view to_string(AutoOperation op) {
  switch (op) {
    case AutoOperation::kTopK: return "top-k";
    case AutoOperation::kOrderStatistic: return "median";
    case AutoOperation::kOrderStatistics: return "percentiles";
    case AutoOperation::kRobustStatistics: return "robust";
  }
  return "?";
}
inline std::string_view to_string(DataClass c) { return c == DataClass::kRepeated ? "repeated" : "continuous"; }

struct AutoRule {
  AutoOperation operation;
  int max_log2_n;        ///< the row holds for n <= 2^max_log2_n
  std::size_t max_k;     ///< top-k: k <= max_k; otherwise ignored
  std::string_view continuous, repeated;
};

inline constexpr std::size_t kAnyK = ~std::size_t{0};
inline constexpr int kAnyN = 64;

/// First matching row wins; every operation ends with a catch-all row. Initial figures: H200
/// runs (2^24 and 2^28) and the H100 table (history: CHANGELOG.md).
inline constexpr AutoRule kAutoRules[] = {
    // Measured on an H100 (bench select, 2^20 - 2^28, medians of 5, summed over each class's
    // distributions; docs/design/selection.md "The auto rule").
    // Top-k: the randomized chain is the fastest at every size on both classes (2^24, k = 20050:
    // 0.08 - 0.14 ms against sample's 0.29 - 0.40; 2^28, k = 65536: 0.44 - 0.99 ms against 1.8 - 2.5).
    {AutoOperation::kTopK, kAnyN, kAnyK, "randomized", "randomized"},
    // One order statistic (the median): CUB's sort up to 2^20 (1.20 ms summed over the nine
    // continuous distributions against randomized's 1.76), then randomized's one-read pass
    // (detail/robust_fused.hpp) on both classes (2^24: 2.09 against sample's 3.15, repeated 0.73
    // against 0.93; 2^28: 5.74 against 18.5, repeated 2.28 against 5.22).
    {AutoOperation::kOrderStatistic, 20, kAnyK, "sort", "sort"},
    {AutoOperation::kOrderStatistic, kAnyN, kAnyK, "randomized", "randomized"},
    // Many order statistics (the 101 percentiles): CUB's sort on continuous data up to 2^26
    // (15.2 against sample's 18.5), SampleSelect with its second level at 2^28 (49.1 against 57.1);
    // sample on repeated keys everywhere.
    {AutoOperation::kOrderStatistics, 26, kAnyK, "sort", "sample"},
    {AutoOperation::kOrderStatistics, kAnyN, kAnyK, "sample", "sample"},
    // robust_statistics: randomized's one-read pass at every size and on both classes (2^20:
    // 2.46 against sort's 2.65; 2^24: 3.08 against sample's 7.30; 2^28: 9.62 against 52.8,
    // repeated 3.46 against 17.8).
    {AutoOperation::kRobustStatistics, kAnyN, kAnyK, "randomized", "randomized"},
};

/// The look at the data costs a launch, a 2 KiB copy and a host synchronization (about 20 us):
/// taken only from this size on, and only when the row's two choices differ.
inline constexpr int kLookMinLog2N = 26;
/// Keys sampled (with replacement) for the look.
inline constexpr std::size_t kLookSamples = 512;
/// `repeated` when at least this fraction of the valid sampled keys equal their predecessor in
/// sorted order. m samples of D equally frequent values repeat about m^2 / 2D times, so the line
/// lies near D = 16 K values (runs of 16 K equal keys at 2^28, the randomized window's size).
/// Expected on the sample: continuous data about 0, narrow (840 values) about 1 in 4, few_distinct
/// and all_equal about 1, many_inf (60% infinite) about 3 in 5.
inline constexpr double kRepeatedFraction = 1.0 / 64.0;

inline const AutoRule& auto_rule(AutoOperation op, std::size_t n, std::size_t k) {
  int log2_n = 0;
  while (log2_n < 63 && (std::size_t{1} << log2_n) < n) ++log2_n;  // ceil(log2 n)
  for (const AutoRule& r : kAutoRules)
    if (r.operation == op && log2_n <= r.max_log2_n && (op != AutoOperation::kTopK || k <= r.max_k)) return r;
  return kAutoRules[0];  // unreachable: each operation ends with a catch-all row
}

/// Whether the rule needs the data class for this call.
inline bool auto_needs_look(AutoOperation op, std::size_t n, std::size_t k) {
  const AutoRule& r = auto_rule(op, n, k);
  return n >= (std::size_t{1} << kLookMinLog2N) && r.continuous != r.repeated;
}

/// The backend for a call; `data` matters only when auto_needs_look.
inline std::string_view auto_choice(AutoOperation op, std::size_t n, std::size_t k, DataClass data) {
  const AutoRule& r = auto_rule(op, n, k);
  return auto_needs_look(op, n, k) && data == DataClass::kRepeated ? r.repeated : r.continuous;
}

/// The class of sampled ranking keys (any order; `invalid_key` marks NaN, which is left out).
inline DataClass classify_sample(std::span<const std::uint32_t> keys, std::uint32_t invalid_key = 0xFFFFFFFFu) {
  std::vector<std::uint32_t> k;
  k.reserve(keys.size());
  for (std::uint32_t v : keys)
    if (v != invalid_key) k.push_back(v);
  if (k.size() < 2) return DataClass::kContinuous;
  std::sort(k.begin(), k.end());
  std::size_t repeats = 0;
  for (std::size_t i = 1; i < k.size(); ++i) repeats += k[i] == k[i - 1];
  return static_cast<double>(repeats) >= kRepeatedFraction * static_cast<double>(k.size()) ? DataClass::kRepeated
                                                                                            : DataClass::kContinuous;
}

}  // namespace gpuclean::select

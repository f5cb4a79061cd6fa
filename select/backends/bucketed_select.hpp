#pragma once
// SampleSelect with its tuning exposed (the registry's `sample` uses the defaults); for tests and
// benchmarks. The flow is described in bucketed_select.cu.

#include <cstddef>
#include <memory>

#include "select/selector.hpp"

namespace gpuclean::select {

struct SampleTuning {
  /// Order statistics: when the target buckets hold at least this many keys in all, a second
  /// SampleSelect level over them finds the ranks' sub-buckets, and only those are sorted; below
  /// it the target buckets are sorted whole (one CUB sort beats the second level's two extra host
  /// round trips). 2^20: the 101 percentiles from n = 2^24 on (an estimate; docs/design/selection.md).
  std::size_t second_level_min = std::size_t{1} << 20;
  /// The count pass searches an Eytzinger-ordered splitter tree, four keys of a float4 at once;
  /// false: the engine's segment pass (one binary search per key), the earlier path.
  bool tree_count = true;
};

std::unique_ptr<Selector> make_sample_selector(const SampleTuning& tuning);

}  // namespace gpuclean::select

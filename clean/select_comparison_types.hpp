#pragma once
// --compare-select's record of one major cycle: the request every GPU selection backend answered,
// and their times (clean/gpu/select_comparison.hpp makes it; app/compare/ writes it).

#include <cstddef>
#include <string>
#include <vector>

namespace gpuclean::clean {

/// One backend's time on one major cycle's selection (--compare-select).
struct BackendTime {
  std::string backend;
  double seconds = 0.0;  ///< median of the timed repeats
};

/// One major cycle of --compare-select: the request every backend answered, and their times.
struct SelectCycleComparison {
  std::size_t cycle = 0;  ///< 1-based
  std::size_t n = 0;      ///< pixels searched
  std::size_t k = 0;      ///< requested
  std::size_t count = 0;  ///< returned (min(k, cleanable pixels)), the same for every backend
  std::vector<BackendTime> times;
};

}  // namespace gpuclean::clean

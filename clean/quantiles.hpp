#pragma once
// Quantiles as ranks among the finite pixels, so that the CPU and GPU paths (and the selection
// library's multiselect) agree on which pixel a quantile names.

#include <cmath>
#include <cstddef>
#include <vector>

namespace gpuclean::clean {

/// 0-based ascending ranks of the quantiles `q` (fractions in [0, 1]) among n_valid values:
/// the nearest rank to q (n_valid - 1). Empty when n_valid is 0.
inline std::vector<std::size_t> quantile_ranks(const std::vector<double>& q, std::size_t n_valid) {
  std::vector<std::size_t> ranks;
  if (n_valid == 0) return ranks;
  for (double f : q) {
    const double c = f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f;
    ranks.push_back(static_cast<std::size_t>(std::llround(c * static_cast<double>(n_valid - 1))));
  }
  return ranks;
}

}  // namespace gpuclean::clean

#pragma once
// --compare-select's numbers: each backend's time at each major cycle, and its speed-up over
// `sort` (CUB radix sort, the baseline), as a terminal table, CSV, and JSON.

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clean/deconvolver.hpp"

namespace gpuclean::app {

class SelectComparisonTable {
 public:
  explicit SelectComparisonTable(std::vector<clean::SelectCycleComparison> cycles);

  const std::vector<clean::SelectCycleComparison>& cycles() const { return cycles_; }
  const std::vector<std::string>& backends() const { return backends_; }
  /// Seconds of `backend` at cycle index i (0-based); NaN when it did not run.
  double seconds(std::size_t i, std::size_t backend) const;
  /// Sum over cycles.
  double total_seconds(std::size_t backend) const;
  /// total(sort) / total(backend); NaN without a sort column.
  double speedup_over_sort(std::size_t backend) const;

  /// cycle,n,k,count,backend,seconds,speedup_over_sort: one row per cycle and backend.
  std::string csv() const;
  nlohmann::json json() const;
  /// Milliseconds per cycle, one column per backend, then totals and speed-ups.
  void print(std::FILE* out) const;

 private:
  std::vector<clean::SelectCycleComparison> cycles_;
  std::vector<std::string> backends_;
  std::vector<std::vector<double>> seconds_;  // [cycle][backend]
};

}  // namespace gpuclean::app

#pragma once
// What a front end watches in a run without changing it: the quick-look scaling (quantiles of the
// restored image, taken where the image lives) and --compare-select (every GPU selection backend
// answering each major cycle's request). The run calls these on the thread that cleans the group;
// the result of CLEAN itself (CleanResult) carries none of it.

#include <utility>
#include <vector>

#include "clean/select_comparison_types.hpp"

namespace gpuclean::clean {

class RunObserver {
 public:
  virtual ~RunObserver() = default;

  /// Quantiles (fractions in [0, 1]) of the restored image's finite pixels to take; empty: none.
  virtual std::vector<double> restored_quantiles() const { return {}; }
  /// Their values, in that order, once the restored image exists.
  virtual void restored_quantiles_taken(const std::vector<float>& /*values*/) {}

  /// Whether each major cycle's selection is also answered by every GPU selection backend
  /// (GPU Clark only), and timed.
  virtual bool compares_selection() const { return false; }
  /// One major cycle's comparison (the backends agreed: a mismatch throws SelectMismatch).
  virtual void selection_compared(const SelectCycleComparison& /*cycle*/) {}
};

/// An observer that keeps what it is told (the front ends write it out after the run). One group
/// at a time: it is not synchronised.
class RunRecord final : public RunObserver {
 public:
  RunRecord(std::vector<double> quantiles, bool compare_selection)
      : quantiles_(std::move(quantiles)), compare_(compare_selection) {}

  std::vector<double> restored_quantiles() const override { return quantiles_; }
  void restored_quantiles_taken(const std::vector<float>& values) override { quantile_values = values; }
  bool compares_selection() const override { return compare_; }
  void selection_compared(const SelectCycleComparison& cycle) override { select_comparison.push_back(cycle); }

  std::vector<float> quantile_values;                    ///< one per quantile asked for
  std::vector<SelectCycleComparison> select_comparison;  ///< one per major cycle

 private:
  std::vector<double> quantiles_;
  bool compare_ = false;
};

}  // namespace gpuclean::clean

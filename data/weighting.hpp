#pragma once
// Visibility weighting of the simulator's grid, with WSClean's definitions (Briggs 1995):
//   natural:  w_k = W_k
//   uniform:  w_k = W_k / C          (C: the gridded weight sum of the sample's uv cell)
//   briggs R: w_k = W_k / (1 + f^2 C),  f^2 = (5 * 10^-R)^2 / (sum over cells C^2 / sum over cells C)
// Briggs R = -2 is close to uniform, R = 2 close to natural.

#include <string>
#include <vector>

namespace gpuclean::data {

enum class WeightingMode { kNatural, kUniform, kBriggs };

struct Weighting {
  WeightingMode mode = WeightingMode::kBriggs;
  double robust = 0.0;  ///< Briggs R
};

/// "natural", "uniform", "briggs 0.5".
std::string to_string(const Weighting& w);

/// Reads `natural`, `uniform` or `briggs R` (R a finite number) from the command line's words.
/// Throws std::invalid_argument with a sentence that says what to give.
Weighting parse_weighting(const std::vector<std::string>& words);

/// The weight of each sample in a cell of gridded weight sum `cell` (> 0), for a grid whose
/// cells hold `sum` in all and `sum_squares` = sum of the squared cell sums.
class SampleWeight {
 public:
  SampleWeight(const Weighting& w, double sum, double sum_squares);
  double operator()(double cell) const;

 private:
  WeightingMode mode_;
  double f2_ = 0.0;
};

}  // namespace gpuclean::data

#include "data/weighting.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gpuclean::data {

std::string to_string(const Weighting& w) {
  switch (w.mode) {
    case WeightingMode::kNatural: return "natural";
    case WeightingMode::kUniform: return "uniform";
    case WeightingMode::kBriggs: break;
  }
  char text[48];
  std::snprintf(text, sizeof text, "briggs %g", w.robust);
  return text;
}

Weighting parse_weighting(const std::vector<std::string>& words) {
  const std::string usage = "; give --weighting natural, --weighting uniform or --weighting briggs R (e.g. briggs 0).";
  if (words.empty()) throw std::invalid_argument("--weighting needs a mode" + usage);
  const std::string& mode = words[0];
  if ((mode == "natural" || mode == "uniform") && words.size() == 1)
    return {mode == "natural" ? WeightingMode::kNatural : WeightingMode::kUniform, 0.0};
  if (mode == "briggs" && words.size() == 2) {
    std::size_t used = 0;
    double r = 0.0;
    try {
      r = std::stod(words[1], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == words[1].size() && std::isfinite(r)) return {WeightingMode::kBriggs, r};
    throw std::invalid_argument("--weighting briggs needs a robustness R as a number, not '" + words[1] + "'" + usage);
  }
  std::string given;
  for (const auto& w : words) given += (given.empty() ? "" : " ") + w;
  throw std::invalid_argument("--weighting '" + given + "' is not a weighting" + usage);
}

SampleWeight::SampleWeight(const Weighting& w, double sum, double sum_squares) : mode_(w.mode) {
  if (mode_ == WeightingMode::kBriggs && sum > 0.0) {
    const double numerator = 5.0 * std::pow(10.0, -w.robust);
    f2_ = numerator * numerator / (sum_squares / sum);
  }
}

double SampleWeight::operator()(double cell) const {
  switch (mode_) {
    case WeightingMode::kNatural: return 1.0;
    case WeightingMode::kUniform: return 1.0 / cell;
    case WeightingMode::kBriggs: break;
  }
  return 1.0 / (1.0 + f2_ * cell);
}

}  // namespace gpuclean::data

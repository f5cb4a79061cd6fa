#include "clean/stop_rules.hpp"

#include <algorithm>

#include "clean/image_stats.hpp"

namespace gpuclean::clean {

std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::kThreshold: return "threshold";
    case StopReason::kMaxIterations: return "niter";
    case StopReason::kDiverged: return "diverged";
    case StopReason::kNoCleanablePixels: return "no-cleanable-pixels";
  }
  return "unknown";
}

double current_threshold(const CleanSettings& settings, std::span<const float> residual, double* sigma) {
  *sigma = 0.0;
  double threshold = settings.threshold;
  if (settings.auto_threshold > 0.0) {
    *sigma = robust_sigma(residual);
    threshold = std::max(threshold, settings.auto_threshold * *sigma);
  }
  return threshold;
}

std::optional<StopReason> check_stop(bool have_peak, float peak, double threshold, std::size_t iterations,
                                     const CleanSettings& settings, std::optional<float> lowest_peak) {
  if (!have_peak) return StopReason::kNoCleanablePixels;
  if (peak <= threshold) return StopReason::kThreshold;
  if (iterations >= settings.niter) return StopReason::kMaxIterations;
  if (lowest_peak && peak > *lowest_peak * kDivergenceFactor) return StopReason::kDiverged;
  return std::nullopt;
}

}  // namespace gpuclean::clean

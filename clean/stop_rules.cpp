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

bool MajorCycleGate::open(CleanResult& result, bool have_peak, float peak, double threshold, double sigma,
                          double model_flux, std::size_t candidates) {
  result.peak_residual = have_peak ? peak : 0.0f;
  result.threshold = threshold;
  result.noise_sigma = sigma;
  if (result.major_cycles > 0 && on_cycle_) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    on_cycle_({result.major_cycles, result.iterations, result.peak_residual, model_flux, threshold, candidates, seconds});
  }
  const auto stop = check_stop(have_peak, result.peak_residual, threshold, result.iterations, settings_, lowest_peak_);
  if (stop) {
    result.reason = *stop;
    return false;
  }
  lowest_peak_ = lowest_peak_ ? std::min(*lowest_peak_, result.peak_residual) : result.peak_residual;
  ++result.major_cycles;
  return true;
}

}  // namespace gpuclean::clean

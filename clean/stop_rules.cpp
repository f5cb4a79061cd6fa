#include "clean/stop_rules.hpp"

#include <algorithm>


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

std::optional<StopReason> check_stop(bool have_peak, float peak, double threshold, std::size_t iterations,
                                     const CleanSettings& settings, std::optional<float> lowest_peak,
                                     std::optional<float> watched, float factor) {
  if (!have_peak) return StopReason::kNoCleanablePixels;
  if (peak <= threshold) return StopReason::kThreshold;
  if (iterations >= settings.niter) return StopReason::kMaxIterations;
  if (lowest_peak && watched.value_or(peak) > *lowest_peak * factor) return StopReason::kDiverged;
  return std::nullopt;
}

void MajorCycleGate::record(CleanResult& result, bool have_peak, float peak, double threshold, double sigma,
                            double model_flux, std::size_t candidates) {
  result.stop.peak_residual = have_peak ? peak : 0.0f;
  result.stop.threshold = threshold;
  result.stop.noise_sigma = sigma;
  if (result.stop.major_cycles > 0 && on_cycle_) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    on_cycle_({result.stop.major_cycles, result.stop.iterations, result.stop.peak_residual, model_flux, threshold, candidates, seconds});
  }
}

void MajorCycleGate::stop(CleanResult& result, bool have_peak, float peak, double threshold, double sigma,
                          double model_flux, std::size_t candidates, StopReason reason) {
  record(result, have_peak, peak, threshold, sigma, model_flux, candidates);
  result.stop.reason = reason;
}

bool MajorCycleGate::open(CleanResult& result, bool have_peak, float peak, double threshold, double sigma,
                          double model_flux, std::size_t candidates, std::optional<float> divergence_peak) {
  record(result, have_peak, peak, threshold, sigma, model_flux, candidates);
  const float watched = divergence_peak.value_or(result.stop.peak_residual);
  const auto stop =
      check_stop(have_peak, result.stop.peak_residual, threshold, result.stop.iterations, settings_, lowest_peak_, watched,
                 settings_.multiscale.enabled ? kMultiscaleDivergenceFactor : kDivergenceFactor);
  if (stop) {
    result.stop.reason = *stop;
    return false;
  }
  lowest_peak_ = lowest_peak_ ? std::min(*lowest_peak_, watched) : watched;
  ++result.stop.major_cycles;
  return true;
}

}  // namespace gpuclean::clean

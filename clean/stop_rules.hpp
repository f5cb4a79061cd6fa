#pragma once
// Stopping rules shared by Högbom and Clark, so that both stop for the same reasons.

#include <optional>
#include <span>

#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"

namespace gpuclean::clean {

/// The threshold in force: max(--threshold, --auto-threshold x robust sigma of the residual).
/// `sigma` receives the noise estimate (0 when auto-threshold is off).
double current_threshold(const CleanSettings& settings, std::span<const float> residual, double* sigma);

/// A run has diverged once a major cycle starts with a peak this much above the lowest peak
/// seen so far. Near the noise the peak wanders by a few per cent; divergence is a steady rise.
inline constexpr float kDivergenceFactor = 1.1f;

/// Checked at the start of every major cycle with the peak found there; `lowest_peak` is the
/// lowest peak seen at an earlier cycle start.
std::optional<StopReason> check_stop(bool have_peak, float peak, double threshold, std::size_t iterations,
                                     const CleanSettings& settings, std::optional<float> lowest_peak);

}  // namespace gpuclean::clean

#pragma once
// Stopping rules of the major-cycle driver (major_cycle.hpp), so that every algorithm stops for the
// same reasons.

#include <chrono>
#include <optional>

#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"

namespace gpuclean::clean {

/// A run has diverged once a major cycle starts with a peak this much above the lowest peak
/// seen so far. Near the noise the peak wanders by a few per cent; divergence is a steady rise.
inline constexpr float kDivergenceFactor = 1.1f;
/// Multiscale: cleaning a wide scale can leave the residual's peak (watched instead of the
/// biased peak) 10-20% above its lowest for a cycle or two; divergence still grows past this.
inline constexpr float kMultiscaleDivergenceFactor = 1.5f;

/// Checked at the start of every major cycle with the peak found there; `lowest_peak` is the
/// lowest `watched` peak (the peak itself unless the caller watches another) seen at an earlier
/// cycle start.
std::optional<StopReason> check_stop(bool have_peak, float peak, double threshold, std::size_t iterations,
                                     const CleanSettings& settings, std::optional<float> lowest_peak,
                                     std::optional<float> watched = std::nullopt,
                                     float factor = kDivergenceFactor);

/// The checks at the start of every major cycle, shared by every CLEAN implementation: the log
/// line of the cycle that just ended, then the stopping rules. The caller measures the peak and
/// the threshold (on the CPU or the GPU) and passes the scalars.
class MajorCycleGate {
 public:
  MajorCycleGate(const CleanSettings& settings, const CycleCallback& on_cycle)
      : settings_(settings), on_cycle_(on_cycle), start_(std::chrono::steady_clock::now()) {}

  /// Records peak, threshold and noise in `result`, reports the finished cycle, and returns
  /// true when another major cycle should run (then counted in result.major_cycles). When it
  /// returns false, result.reason says why the run stopped. `divergence_peak`, when given, is
  /// what the divergence rule watches instead of `peak`: multiscale's biased peaks belong to
  /// different scales from one cycle to the next, so it watches the residual's own peak.
  bool open(CleanResult& result, bool have_peak, float peak, double threshold, double sigma,
            double model_flux, std::size_t candidates, std::optional<float> divergence_peak = std::nullopt);
  /// Records peak, threshold and noise and reports the finished cycle as open() does, and stops
  /// the run for `reason` without checking the rules (a caller's own reason to end it here).
  void stop(CleanResult& result, bool have_peak, float peak, double threshold, double sigma, double model_flux,
            std::size_t candidates, StopReason reason);
  /// The divergence rule starts afresh (a residual re-imaged outside the run does not continue
  /// the last one's peaks).
  void forget_peaks() { lowest_peak_.reset(); }

 private:
  void record(CleanResult& result, bool have_peak, float peak, double threshold, double sigma, double model_flux,
              std::size_t candidates);

  const CleanSettings& settings_;
  const CycleCallback& on_cycle_;
  std::chrono::steady_clock::time_point start_;
  std::optional<float> lowest_peak_;
};

}  // namespace gpuclean::clean

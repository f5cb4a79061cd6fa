#pragma once
// The major-cycle loop, once for every algorithm and device (radler's design: one loop, the
// algorithms as step implementations, major_cycle_steps.hpp). Each major cycle:
//   1. the scale images and the scale to clean (steps.choose); with --local-rms the noise map is
//      remade once the residual's peak has fallen by kLocalRmsRemakeFactor since it was made (in an
//      outer loop's round, only at the round's start);
//   2. threshold = max(--threshold, --auto-threshold x sigma), sigma the robust noise of the
//      residual (in an outer loop's round, of the round's first residual, kept for the round) or
//      the map's lowest noise; --auto-mask's first phase holds against
//      max(threshold, --auto-mask x sigma) and, once that is reached, the mask is made from the
//      components so far and the run goes on inside it (without the map's weights);
//   3. the stopping rules (MajorCycleGate: threshold, niter, divergence);
//   4. Clark's limit = max(threshold / bias, sidelobe x unweighted peak, (1 - mgain) x peak,
//      (1 - multiscale gain) x peak with several scales);
//   5. the active set above the limit, the minor cycles down to it, the subtraction.
// A run can be driven to its end (run) or one major cycle at a time (next, then finish), e.g.
// from an outer loop that re-images between calls. The driver keeps the books: iterations and
// major cycles in the result, and which scale each cycle cleaned (its components' scales).
// The steps (major_cycle_steps.hpp) and their image state (image_state.hpp) do the work.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "clean/auto_mask.hpp"
#include "clean/major_cycle_steps.hpp"
#include "clean/stop_rules.hpp"

namespace gpuclean::clean {

class MajorCycleDriver {
 public:
  /// `steps`, `problem`, `settings` and `on_cycle` must outlive the driver.
  MajorCycleDriver(MajorCycleSteps& steps, const CleanProblem& problem, const CleanSettings& settings,
                   const CycleCallback& on_cycle);

  /// Runs one major cycle: true when it cleaned, false once a stopping rule has fired
  /// (result.reason says which) or a minor cycle could clean nothing.
  bool next(CleanResult& result);
  /// The run's end: the steps' release, the state's images into `result` (restored when asked),
  /// each component's scale and the scales' summary.
  void finish(CleanResult& result);
  /// Every major cycle until the run stops, then finish.
  CleanResult run();

  /// An outer loop's next round (WSClean's major cycle): the steps were given a residual made
  /// outside (MajorCycleSteps::set_residuals); next() goes on from it down to max(the threshold,
  /// `floor`), with the divergence rule started afresh and the robust noise estimated once, on
  /// this residual (threshold()). With one scale and an active set, the round is one pass, as a
  /// WSClean 3.1 major iteration: it ends after the cycle that cleaned its whole set (not cut by
  /// --select-k) down to the round's threshold, even where that raised other pixels above it; a
  /// pass that ends at --auto-mask's level rather than the round's floor ends the first phase. The model, the components and the
  /// --auto-mask phase stay. As in WSClean (radler.cc), which makes one RMS image per major
  /// cycle, a --local-rms map in use is made from the new residual and kept for the whole round.
  /// With `round_gain` < 1 the round also stops once the peak key fell to (1 - round_gain) x its
  /// value at the round's first cycle (WSClean's -mgain, in the keys' units, so that it holds with
  /// --local-rms weights too); that floor does not end --auto-mask's first phase, which waits for
  /// its own level. When that level is reached after the round's first cycle, the round ends there
  /// (auto_mask_started()): as WSClean's "Auto-masking threshold reached; continuing next major
  /// iteration with deeper threshold and mask", the masked phase, unweighted, starts in a round of
  /// its own on a re-imaged residual with its own first peak. Reached at the round's first cycle,
  /// the round goes on inside the mask.
  void resume(double floor, double round_gain = 1.0);
  /// Whether the last next() stopped (or ran) held against resume's round floor rather than the
  /// thresholds, or ended the round at --auto-mask's switch: the outer loop's cue that another
  /// round is due.
  bool round_floor_ruled() const { return round_floor_ruled_; }
  /// Whether the round ended because --auto-mask's first phase did (resume).
  bool auto_mask_started() const { return auto_mask_started_; }
  /// The stopping rule's peak key (weighted, biased: ScaleChoice::biased) at the round's first
  /// next() and at the last one; 0 when no scale had a peak.
  float first_key() const { return first_key_.value_or(0.0f); }
  float last_key() const { return last_key_; }

  /// The threshold in force now: max(--threshold, resume's floor, --auto-threshold x sigma); `sigma` receives
  /// `noise` when given (--local-rms: the lowest local noise), else the residual's robust noise
  /// (0 when neither --auto-threshold nor --auto-mask needs it): the current residual's, or in an
  /// outer loop's round the round's first residual's (WSClean 3.1's one estimate per major iteration).
  double threshold(double* sigma, std::optional<double> noise);

 private:
  void make_noise_map(CleanResult& result);
  void start_auto_mask(CleanResult& result);
  /// The components so far with their scales (--auto-mask's footprints).
  std::vector<Component> components(const CleanResult& result);
  void assign_scales(std::vector<Component>& components) const;
  void note_key(const ScaleChoice& choice);  // last_key_, and first_key_ at a round's first next()

  MajorCycleSteps& steps_;
  ImageState& state_;
  const CleanProblem& problem_;
  const CleanSettings& settings_;
  const bool several_scales_;
  MajorCycleGate gate_;
  AutoMaskPhase phase_;
  bool started_ = false, done_ = false, remake_map_ = false;
  bool weighing_;                  // --local-rms weights in force
  double rms_fwhm_ = 0.0, min_rms_ = 0.0;
  double floor_ = 0.0;             // an outer loop's threshold (resume)
  double round_gain_ = 1.0;        // an outer loop's -mgain (resume)
  std::optional<float> round_key_; // the peak key at the round's first cycle
  std::optional<float> first_key_; // the rule's key at the round's first next(), whatever its gain
  float last_key_ = 0.0f;          // and at the last
  std::optional<double> round_sigma_;  // the residual's robust σ, once per outer-loop round (threshold)
  bool pass_done_ = false;         // this round's Clark cycle cleaned its whole set to the round's threshold
  bool round_floor_ruled_ = false;
  bool outer_ = false;             // driven round by round (resume): the map is made per round
  bool auto_mask_started_ = false; // the round ended at --auto-mask's switch
  std::optional<float> map_peak_;  // the residual's peak when the map was last made
  std::size_t last_candidates_ = 0;
  std::vector<std::pair<std::size_t, std::uint32_t>> cycle_scales_;  // (first component, scale) per cycle
};

/// Runs `steps` to the end with the driver: what every Deconvolver::run is.
CleanResult run_major_cycles(MajorCycleSteps& steps, const CleanProblem& problem, const CleanSettings& settings,
                             const CycleCallback& on_cycle);

}  // namespace gpuclean::clean

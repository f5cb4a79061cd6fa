#pragma once
// CLEAN as one step of another program's major cycle (WSClean's -python-deconvolution, the
// Cotton-Schwab loop): the other program predicts the model into the visibilities and re-images
// between rounds; each round here takes its residual, cleans it with the major-cycle driver down
// to a floor, and hands back the model and the residual. What does not change between rounds
// (the PSFs and their spectra, cuFFT plans, device buffers, the scale kernels, --auto-mask's phase
// and mask) is made in the constructor and kept; a round moves only the residual.
//
// As a WSClean 3.1 major iteration: the robust noise for --auto-threshold/--auto-mask is estimated
// once per round, on its residual (MajorCycleDriver::threshold), and without --multiscale Clark's
// minor cycle subtracts the whole PSF (--beam-patch is raised to reach every PSF pixel from its
// peak) in one pass per round (MajorCycleDriver::resume), as WSClean's sub-minor loop does.
//
// The planes arrive channel-major ([channel][polarization], WSClean's order). Several channels
// are joined as --join-channels, several polarizations as --join-polarizations; a channel with
// weight 0 or no finite pixel (flagged) is left out of the join, and its model stays empty.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/major_cycle.hpp"
#include "clean/major_cycle_steps.hpp"
#include "clean/run_plan.hpp"
#include "clean/work_table.hpp"

namespace gpuclean::clean {

/// What stays from round to round.
struct OuterLoopInput {
  std::size_t width = 0, height = 0, channels = 1, polarizations = 1;
  std::vector<HostImage> psfs;         ///< one per channel, shared by its polarizations
  std::vector<double> frequencies_hz;  ///< per channel
  std::vector<double> weights;         ///< per channel (WSClean's channel weights; 0: flagged)
  std::optional<HostImage> fits_mask;  ///< non-zero: may be cleaned (--fits-mask)
  /// Several polarizations: JoinedPlanes::polarization_factor (0.5 for correlations, 1 for Stokes).
  double polarization_factor = 1.0;
  /// GPU: the GPUs the joined planes may be split over (PlanRequest::gpus; the current device
  /// first); empty: the current device alone, as before.
  std::vector<int> gpus;
};

/// What one round did.
struct OuterLoopRound {
  std::size_t components = 0;     ///< made in this round
  std::size_t major_cycles = 0;   ///< the driver's own (image-domain) major cycles in this round
  float peak = 0.0f;              ///< the residual's peak at the round's start (integrated, unweighted)
  float peak_left = 0.0f;         ///< and at its end
  /// The peak the stopping rule compares with the threshold, at the round's first cycle and its
  /// last: the chosen scale's peak weighted by --local-rms (at the smallest RMS's level) and the
  /// scale's bias. Without weights and with one scale, |peak| and |peak_left|.
  float key = 0.0f, key_left = 0.0f;
  double threshold = 0.0;         ///< the threshold in force when the round stopped
  double noise_sigma = 0.0;       ///< the last robust noise estimate (0 when none was needed)
  StopReason reason = StopReason::kThreshold;
  /// The round stopped at its own floor ((1 - round_gain) x its first peak), above the
  /// thresholds: another round is due.
  bool round_floor = false;
  /// The round ended where --auto-mask's first phase did (MajorCycleDriver::resume); round_floor is
  /// then true too: the masked phase starts in the next round.
  bool auto_mask_started = false;
};

/// What a Cotton-Schwab loop drives round by round: one session over the whole image
/// (OuterLoopSession), or WSClean's sub-images each with its own (parallel_deconvolution.hpp).
class RoundEngine {
 public:
  virtual ~RoundEngine() = default;
  virtual std::size_t planes() const = 0;
  /// Sub-images cleaned on their own (1: the whole image). Above 1 a round's `budget` is each
  /// sub-image's, as WSClean gives each sub-image -niter.
  virtual std::size_t sub_images() const { return 1; }
  virtual void set_residuals(const std::vector<const float*>& planes) = 0;
  /// The residual's peak where the stopping rule searches: over the cleanable pixels (inside any
  /// mask), integrated over the planes.
  virtual float peak() = 0;
  virtual OuterLoopRound clean(double floor, double round_gain, std::size_t budget, const CycleCallback& on_cycle) = 0;
  virtual std::vector<HostImage> models() = 0;
  virtual std::vector<HostImage> residuals() = 0;
  /// The run is over: its components, with their plane fluxes and scales, into result().
  /// Ends the session: models() and residuals() are not valid afterwards.
  virtual void finish() = 0;
  virtual const CleanResult& result() const = 0;
};

class OuterLoopSession : public RoundEngine {
 public:
  /// `first`: the first round's residual, one image per plane (channels x polarizations,
  /// channel-major), width x height each. `settings` are validated by the caller; its device is
  /// what was asked for: the run plan (run_plan.hpp) resolves it and, for --device auto, falls
  /// back to the CPU when the GPU cannot hold the run (plan().fallback says so).
  OuterLoopSession(const CleanSettings& settings, OuterLoopInput input, const std::vector<const float*>& first);
  ~OuterLoopSession();
  OuterLoopSession(const OuterLoopSession&) = delete;
  OuterLoopSession& operator=(const OuterLoopSession&) = delete;

  std::size_t planes() const override { return input_.channels * input_.polarizations; }
  Device device() const { return settings_.device; }
  const RunPlan& plan() const { return plan_; }
  /// --device auto: what was found (for the verbose log).
  const std::string& device_note() const { return device_note_; }
  /// The residual's peak now (over the cleanable pixels, integrated, without --local-rms weights).
  float peak() override;
  /// The next round's residual (every plane, as in the constructor).
  void set_residuals(const std::vector<const float*>& planes) override;
  /// Cleans down to max(`floor`, the settings' thresholds, (1 - `round_gain`) x the round's first
  /// peak key), at most `budget` components (MajorCycleDriver::resume).
  OuterLoopRound clean(double floor, double round_gain, std::size_t budget, const CycleCallback& on_cycle) override;

  /// Every plane's model so far (Jy/pixel) and residual now, in the input's order.
  std::vector<HostImage> models() override;
  std::vector<HostImage> residuals() override;
  /// The driver's finish (major_cycle.hpp), its images dropped: the result keeps the components.
  void finish() override;
  /// The run so far: iterations and the driver's own major cycles; after finish(), also its
  /// components (and each one's plane fluxes when joined).
  const CleanResult& result() const override { return result_; }

 private:
  std::vector<HostImage> to_input_order(std::vector<HostImage> active, bool models);

  CleanSettings settings_;  // niter is the round's limit (clean())
  OuterLoopInput input_;
  std::vector<std::size_t> active_;  // the input planes cleaned, in order
  std::vector<HostImage> first_;     // the first residual of the active planes
  std::vector<PreparedPsf> psfs_;    // per active channel
  WorkTable table_;
  RunPlan plan_;
  std::string device_note_;
  std::optional<GroupProblem> group_;
  std::unique_ptr<Deconvolver> deconvolver_;  // outlives the steps (a GPU one holds their resources)
  std::unique_ptr<MajorCycleSteps> steps_;
  CycleCallback on_cycle_;                    // the driver holds a reference
  std::optional<MajorCycleDriver> driver_;
  CleanResult result_;
};

}  // namespace gpuclean::clean

#pragma once
// `gpuclean image -niter N`: WSClean 3.1's Cotton-Schwab loop (main/wsclean.cpp
// runMajorIterations), driving an OuterLoopSession round by round. Each major cycle is one
// round of CLEAN; with -mgain < 1 the full model is then predicted into the model visibilities
// and the residual re-imaged from data - model, also after the last round, so the residual left
// in the session (and written as NAME-residual.fits) comes from the visibilities. With -mgain 1
// there is no prediction at all: the residual is the deconvolver's own image-plane residual.
// The gridder is behind MajorCycleImager, which the resident VisStore implements.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "app/image/image_options.hpp"
#include "clean/host_image.hpp"
#include "clean/outer_loop.hpp"

namespace gpuclean::app {

/// The visibilities' side of the loop. Planes are the session's, in its order (channel-major).
class MajorCycleImager {
 public:
  virtual ~MajorCycleImager() = default;
  /// The first inversion: each plane's dirty image and each channel's PSF, normalised as the
  /// residuals will be (made once; the session is built from them).
  virtual std::vector<clean::HostImage> dirty() = 0;
  virtual std::vector<clean::HostImage> psfs() = 0;
  /// Predicts the full model (Jy/pixel, one per plane) into the model visibilities, replacing
  /// the previous prediction (WSClean's resetModelColumns, then predict).
  virtual void predict(const std::vector<clean::HostImage>& models) = 0;
  /// Images data - model visibilities, one residual per plane, with the first inversion's
  /// normalisation.
  virtual std::vector<clean::HostImage> invert_residual() = 0;
};

/// WSClean's loop options (3.1's defaults; the rest WSClean 3.7's, radler.cc Perform).
struct MajorCycleSettings {
  std::size_t niter = 0;    ///< -niter: components over all major cycles (0: no deconvolution)
  double mgain = 1.0;       ///< -mgain: each round stops once its peak fell by this fraction
  std::size_t nmiter = 20;  ///< -nmiter: most major cycles (0: no limit)
  double mgain_boosting = 1.0;  ///< -mgain-boosting: cycle 1 at 1 - (1 - mgain)^b, cycle 2 at b' = (b - 1)/2 + 1
  std::optional<std::size_t> auto_mask_nmiter;  ///< -auto-mask-nmiter: cycles after the auto-mask threshold
  MajorIterationMode mode = MajorIterationMode::kSingle;  ///< -major-iteration-mode
  bool auto_masking = false;          ///< -auto-mask or -abs-auto-mask is on (the mode and nmiter need it)
  bool skip_final_iteration = false;  ///< -skip-final-iteration: no predict and re-image after the last round
  bool keep_first_residual = false;   ///< -save-first-residual: the report keeps the first round's residuals
  /// -local-rms: the stopping rule compares weighted peaks, which the progress line gives too.
  bool local_rms = false;
};

/// radler's CalculateBoostedGain: the major-loop gain of cycle k (1-based).
double boosted_gain(double mgain, double boost, std::size_t k);

/// Why the loop ended.
enum class MajorCycleStop {
  kNone,          ///< -niter 0: no deconvolution
  kConverged,     ///< a round stopped at a threshold (not at its mgain floor)
  kNiter,         ///< -niter components were made
  kNmiter,        ///< -nmiter major cycles were run
  kNothingLeft,   ///< a round stopped with nothing (more) to clean, or diverged
  kAutoMaskNmiter,  ///< -auto-mask-nmiter cycles were run after the auto-mask threshold
};
std::string_view to_string(MajorCycleStop s);

/// One major cycle.
struct MajorCycleStep {
  std::size_t index = 0;         ///< 1-based, as WSClean's "== Deconvolving (k) =="
  std::size_t budget = 0;        ///< components the round was allowed
  clean::OuterLoopRound round;   ///< the session's round (components, peaks, threshold, reason)
  double gain = 1.0;             ///< the round's major-loop gain (-mgain, boosted in cycles 1 and 2)
  /// -major-iteration-mode dual or full: the round continued in the image with this gain (0: not).
  double continued_gain = 0.0;
  std::size_t continued_components = 0;  ///< made by that continuation
  bool predicted = false;        ///< the model was predicted and the residual re-imaged after it
  /// The re-imaged residual's peak where the stopping rule looks (inside the mask, integrated over
  /// the planes); 0 when not re-imaged.
  float peak_reimaged = 0.0f;
  bool more = false;             ///< another major cycle followed
  /// Wall seconds of the round's CLEAN, of predicting the model and of re-imaging the residual
  /// (0 when not predicted).
  double deconvolve_s = 0.0, predict_s = 0.0, invert_s = 0.0;
};

struct MajorCycleReport {
  std::vector<MajorCycleStep> cycles;  ///< WSClean's "N major iterations" is cycles.size()
  std::size_t iterations = 0;          ///< components over every cycle
  std::size_t predictions = 0;         ///< model predictions (and re-imagings) made
  MajorCycleStop stop = MajorCycleStop::kNone;
  /// -save-first-residual (with -mgain < 1): each plane's residual after the first round's CLEAN,
  /// before the first prediction (WSClean's writeFirstResidualImages).
  std::vector<clean::HostImage> first_residuals;
};

/// One line per major cycle for the log.
using MajorCycleProgress = std::function<void(const std::string&)>;

/// The progress line of one cycle.
/// `weighted`: -local-rms is on, and the line gives the stopping rule's weighted peaks too.
std::string progress_line(const MajorCycleStep& step, std::size_t iterations_so_far, bool weighted = false);

/// Runs the loop on `session` (built from `imager`'s dirty images and PSFs with the caller's
/// thresholds); on return the session holds the final model and residual. With WSClean's
/// sub-images (session.sub_images() > 1) -niter is each sub-image's budget, as WSClean gives it,
/// and the loop ends when one of them used it. `on_cycle` reports the
/// session's own (image-domain) cycles, `progress` one line per major cycle.
MajorCycleReport run_major_cycles(MajorCycleImager& imager, clean::RoundEngine& session,
                                  const MajorCycleSettings& settings, const MajorCycleProgress& progress = {},
                                  const clean::CycleCallback& on_cycle = {});

}  // namespace gpuclean::app

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

/// WSClean's loop options (3.1's defaults).
struct MajorCycleSettings {
  std::size_t niter = 0;    ///< -niter: components over all major cycles (0: no deconvolution)
  double mgain = 1.0;       ///< -mgain: each round stops once its peak fell by this fraction
  std::size_t nmiter = 20;  ///< -nmiter: most major cycles (0: no limit)
};

/// Why the loop ended.
enum class MajorCycleStop {
  kNone,          ///< -niter 0: no deconvolution
  kConverged,     ///< a round stopped at a threshold (not at its mgain floor)
  kNiter,         ///< -niter components were made
  kNmiter,        ///< -nmiter major cycles were run
  kNothingLeft,   ///< a round stopped with nothing (more) to clean, or diverged
};
std::string_view to_string(MajorCycleStop s);

/// One major cycle.
struct MajorCycleStep {
  std::size_t index = 0;         ///< 1-based, as WSClean's "== Deconvolving (k) =="
  std::size_t budget = 0;        ///< components the round was allowed
  clean::OuterLoopRound round;   ///< the session's round (components, peaks, threshold, reason)
  bool predicted = false;        ///< the model was predicted and the residual re-imaged after it
  float peak_reimaged = 0.0f;    ///< the re-imaged residual's peak (|max| over every plane); 0 when not
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
};

/// One line per major cycle for the log.
using MajorCycleProgress = std::function<void(const std::string&)>;

/// The progress line of one cycle.
std::string progress_line(const MajorCycleStep& step, std::size_t iterations_so_far);

/// Runs the loop on `session` (built from `imager`'s dirty images and PSFs with the caller's
/// thresholds); on return the session holds the final model and residual. `on_cycle` reports the
/// session's own (image-domain) cycles, `progress` one line per major cycle.
MajorCycleReport run_major_cycles(MajorCycleImager& imager, clean::OuterLoopSession& session,
                                  const MajorCycleSettings& settings, const MajorCycleProgress& progress = {},
                                  const clean::CycleCallback& on_cycle = {});

}  // namespace gpuclean::app

#pragma once
// What one CLEAN algorithm does that another does not, as the major-cycle driver
// (major_cycle.hpp) calls it: its scales, the choice of the scale to clean, the active set, the
// minor cycle and the major cycle's subtraction. Everything the algorithms share is elsewhere:
// the images, the noise map, the plane set and the restoration in the image state
// (image_state.hpp, once per device); the stopping rules, the thresholds, the --local-rms map's
// schedule, --auto-mask's phases, Clark's limit, the divergence rule and the books (iterations,
// major cycles, each component's scale) in the driver. So one loop drives Clark, Högbom and
// multiscale, one plane or joined planes, on the CPU and the GPU, and a new algorithm writes only
// what it does (tests/clean/toy_steps.cpp is one).
//
// Scales: a plain run is one delta scale (bias 1); multiscale has several. A key is what peaks
// are compared by: |value|, or the value itself without negatives, times the --local-rms weight
// while the state has weights.

#include <cstddef>
#include <limits>
#include <cstdint>
#include <memory>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/image_state.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean {

/// The scale a major cycle cleans, and its peak.
struct ScaleChoice {
  std::ptrdiff_t scale = -1;  ///< -1: no scale has a cleanable pixel
  float key = 0.0f;           ///< the chosen scale image's peak key
  float biased = 0.0f;        ///< key x the scale's bias: what the thresholds are held against
  /// The scale image's own peak key, before --local-rms's weights (Clark's sidelobe limit bounds
  /// errors in the image's own units).
  float unweighted = 0.0f;
};

/// The active set a major cycle selected.
struct Selection {
  std::size_t count = 0;          ///< its members (0: the algorithm searches the whole image)
  double untimed_seconds = 0.0;   ///< spent inside select() on work that is not CLEAN's (--compare-select)
};

class MajorCycleSteps {
 public:
  virtual ~MajorCycleSteps() = default;

  /// The image state the steps work on (they own it; it outlives every call below).
  virtual ImageState& state() = 0;

  /// The scales, smallest first; their bias and sidelobe set Clark's limit (sidelobe 0 for an
  /// algorithm that subtracts the whole PSF in its minor cycle), their kernels --auto-mask's
  /// footprints. Fixed for the run.
  virtual const std::vector<CleanScale>& scales() const = 0;

  /// Makes every scale's image of the residual (weighed by the state's weights, if any) and picks
  /// the scale whose biased peak is largest.
  virtual ScaleChoice choose() = 0;
  /// The residual's own peak key over the current mask, without weights (0 when nothing is
  /// cleanable): what the divergence rule watches with several scales, and the --local-rms
  /// schedule.
  virtual float residual_peak() = 0;

  /// From now on scale s searches only where masks[s] is set (--auto-mask's second phase). By
  /// default one scale's: the state's mask.
  virtual void restrict(const std::vector<std::vector<std::uint8_t>>& masks) { state().restrict(masks.at(0)); }

  /// The active set: the brightest cleanable pixels of `choice`'s scale image above `limit`.
  /// `cycle` is the 1-based major cycle. By default none: the minor cycle searches the image.
  virtual Selection select(const ScaleChoice& choice, double limit, std::size_t cycle);
  /// Minor cycles on the scale until its peak is at or below `limit`, or `budget` components;
  /// appends the components (their fluxes in model units) to the state's list and returns how
  /// many (the driver counts them).
  virtual std::size_t minor_cycle(std::size_t scale, double limit, std::size_t budget) = 0;
  /// The most components one minor cycle makes whatever its budget (the GPU engine's size);
  /// a cycle that made this many may have stopped short of its limit.
  virtual std::size_t cycle_capacity() const { return std::numeric_limits<std::size_t>::max(); }
  /// The last minor cycle's `made` components into the model and out of the residual. By
  /// default nothing: the minor cycle subtracted them.
  virtual void subtract(std::size_t scale, std::size_t made);

  /// The run is over, before the state's finish: the steps' own statistics into the result, and
  /// the memory they free for the restoration. By default nothing.
  virtual void release(CleanResult& result);
  /// The residual was replaced from outside (set_residuals): what the steps remember of the old
  /// one (a cached peak) is forgotten. By default nothing.
  virtual void residuals_replaced() {}

  /// The state's, for an outer loop (ImageState says what they do).
  void set_residuals(const std::vector<const float*>& planes) {
    state().set_residuals(planes);
    residuals_replaced();
  }
  std::vector<HostImage> model_images() { return state().model_images(); }
  std::vector<HostImage> residual_images() { return state().residual_images(); }
};

/// Makes an algorithm's CPU steps for one run (a row of the factory's table, algorithm_row.hpp).
using CpuStepsMaker = std::unique_ptr<MajorCycleSteps> (*)(const CleanProblem&, const CleanSettings&);

}  // namespace gpuclean::clean

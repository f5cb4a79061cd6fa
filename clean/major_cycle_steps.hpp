#pragma once
// What one CLEAN algorithm does on one device, as the major-cycle driver (major_cycle.hpp) calls
// it. The driver owns everything the algorithms share: the stopping rules and thresholds, the
// --local-rms map's schedule, --auto-mask's two phases, Clark's limit and the divergence rule.
// An implementation owns the images (host or device) and answers in scalars, so that one loop
// drives Clark, Högbom and multiscale, one plane or joined planes, on the CPU and the GPU.
//
// Scales: a plain run is one delta scale (bias 1); multiscale has several. A key is what peaks
// are compared by: |value|, or the value itself without negatives, times the --local-rms weight
// while weights are on.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/local_rms.hpp"
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

/// A --local-rms map's lowest and highest positive value (Jy/beam).
struct NoiseMapRange {
  double min_rms = 0.0, max_rms = 0.0;
};

/// The active set a major cycle selected.
struct Selection {
  std::size_t count = 0;          ///< its members (0: the algorithm searches the whole image)
  double untimed_seconds = 0.0;   ///< spent inside select() on work that is not CLEAN's (--compare-select)
};

class MajorCycleSteps {
 public:
  virtual ~MajorCycleSteps() = default;

  /// The scales, smallest first; their bias and sidelobe set Clark's limit (sidelobe 0 for an
  /// algorithm that subtracts the whole PSF in its minor cycle), their kernels --auto-mask's
  /// footprints. Fixed for the run.
  virtual const std::vector<CleanScale>& scales() const = 0;

  /// Makes every scale's image of the residual and picks the scale whose biased peak is largest.
  virtual ScaleChoice choose() = 0;
  /// The residual's own peak key over the current mask, without weights (0 when nothing is
  /// cleanable): what the divergence rule watches with several scales, and the --local-rms
  /// schedule.
  virtual float residual_peak() = 0;
  /// 1.4826 x the median absolute deviation of the residual's finite pixels (0 when none).
  virtual double robust_sigma() = 0;
  /// Model flux so far (Jy), for the per-cycle report.
  virtual double model_flux() = 0;

  /// --local-rms: makes the residual's noise map (window FWHM in pixels) and searches with its
  /// weights from the next choose() on; returns the map's lowest and highest positive value.
  virtual NoiseMapRange make_noise_map(const LocalRmsSettings& settings, double window_fwhm_pixels) = 0;
  /// Searches without weights from now on (--auto-mask's second phase).
  virtual void drop_weights() = 0;

  /// The components so far (positions and scales), for --auto-mask's footprints.
  virtual std::vector<Component> components(const CleanResult& result) = 0;
  /// From now on scale s searches only where masks[s] is set (--auto-mask's second phase).
  virtual void restrict(const std::vector<std::vector<std::uint8_t>>& masks) = 0;

  /// The active set: the brightest cleanable pixels of `choice`'s scale image above `limit`.
  /// `cycle` is the 1-based major cycle.
  virtual Selection select(const ScaleChoice& choice, double limit, std::size_t cycle, CleanResult& result) = 0;
  /// Minor cycles on the scale until its peak is at or below `limit`, or `budget` components;
  /// appends the components (their fluxes in model units) to `result` and returns how many.
  virtual std::size_t minor_cycle(std::size_t scale, double limit, std::size_t budget, CleanResult& result) = 0;
  /// The last minor cycle's `made` components into the model and out of the residual.
  virtual void subtract(std::size_t scale, std::size_t made, CleanResult& result) = 0;

  /// Replaces the residual with one made outside (an outer loop that predicts the model into the
  /// visibilities and re-images between major cycles, as WSClean's does): one image per plane (one
  /// for a plain run; a joined run's planes in its order), each the problem's width x height,
  /// row-major, NaN where nothing is known. A joined run's integrated image is remade from them.
  /// The model, the components and any --auto-mask restriction stay.
  virtual void set_residuals(const std::vector<const float*>& planes) = 0;
  /// Each plane's model so far (Jy/pixel), without ending the run: what an outer loop predicts.
  virtual std::vector<HostImage> model_images() = 0;
  /// Each plane's residual now, without ending the run.
  virtual std::vector<HostImage> residual_images() = 0;

  /// The run's end: images, components and statistics into `result` (restored when asked).
  virtual void finish(CleanResult& result) = 0;
};

/// The one plane of set_residuals()'s argument for a run that cleans one plane; throws
/// InvalidInput otherwise.
const float* only_plane(const std::vector<const float*>& planes);

/// Makes an algorithm's CPU steps for one run (the factory's table, deconvolver_factory.cpp).
using CpuStepsMaker = std::unique_ptr<MajorCycleSteps> (*)(const CleanProblem&, const CleanSettings&);

}  // namespace gpuclean::clean

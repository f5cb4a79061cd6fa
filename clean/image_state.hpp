#pragma once
// The images a CLEAN run works on, apart from the algorithm's steps (major_cycle_steps.hpp):
// written once per device (CpuImageState, gpu::GpuImageState) and shared by every algorithm.
// It holds the residual, the model, the clean mask, the --local-rms map and its weights, the
// components' home and the plane set (one plane, or several joined: the plane set, not the
// algorithm, tells them apart), and answers the driver (major_cycle.hpp) in scalars: the robust
// noise for the thresholds, the model's flux for the report, the noise map's range. An outer
// loop hands it residuals made outside and takes its images; at the run's end it writes the
// images into the result and restores them (radler's ImageSet and the parts of its
// DeconvolutionAlgorithm that do not differ between algorithms).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/image_stats.hpp"
#include "clean/local_rms.hpp"

namespace gpuclean::clean {

/// A --local-rms map's lowest and highest positive value (Jy/beam).
struct NoiseMapRange {
  double min_rms = 0.0, max_rms = 0.0;
};

/// A peak's key: |value|, or the value itself without negatives; 0 for no peak.
inline float peak_key(const Peak& p, bool allow_negative) {
  return p.index < 0 ? 0.0f : (allow_negative ? std::abs(p.value) : p.value);
}

class ImageState {
 public:
  virtual ~ImageState() = default;

  /// 1.4826 x the median absolute deviation of the residual's finite pixels (0 when none).
  virtual double robust_sigma() = 0;
  /// Model flux so far (Jy), for the per-cycle report.
  virtual double model_flux() = 0;
  /// The brightest cleanable pixel of the residual under the state's mask (clean::find_peak's
  /// rule): what an algorithm with one scale searches.
  virtual Peak peak() = 0;

  /// --local-rms: makes the residual's noise map (window FWHM in pixels); its weights are the
  /// steps' from their next search on. Returns the map's lowest and highest positive value.
  virtual NoiseMapRange make_noise_map(const LocalRmsSettings& settings, double window_fwhm_pixels) = 0;
  /// No weights from now on (--auto-mask's second phase).
  virtual void drop_weights() = 0;

  /// The first `count` components (positions and fluxes; their scales are the driver's books').
  virtual std::vector<Component> components(std::size_t count) = 0;
  /// From now on only `mask`'s pixels are cleanable (--auto-mask's second phase of an algorithm
  /// with one scale; one with several restricts its scale images itself).
  virtual void restrict(const std::vector<std::uint8_t>& mask) = 0;

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

  /// The run's end: images, the first result.iterations components, the noise map and the
  /// planes into `result`, restored when the problem asks.
  virtual void finish(CleanResult& result) = 0;
};

/// The one plane of set_residuals()'s argument for a run that cleans one plane; throws
/// InvalidInput otherwise.
const float* only_plane(const std::vector<const float*>& planes);

}  // namespace gpuclean::clean

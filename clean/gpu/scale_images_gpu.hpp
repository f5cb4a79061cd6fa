#pragma once
// Each major cycle's scale images on the GPU and the choice among them: the twin of
// clean::ScaleImagesCpu (scale_images_cpu.hpp), with the same rule. A delta scale's search image
// is the state's own masked residual; the others are the residual (NaN as 0) convolved with
// their kernel by cuFFT, masked by the clean mask and the scale's border.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean::gpu {

class ScaleImagesGpu {
 public:
  ScaleImagesGpu(GpuResources& resources, GpuImageState& state, const std::vector<CleanScale>& scales);

  struct Choice {
    std::ptrdiff_t scale = -1;  ///< -1: no scale has a cleanable pixel
    Peak peak;
    float biased = 0.0f;
    float unweighted = 0.0f;  ///< the scale image's own peak key, before --local-rms's weights
  };
  /// --local-rms: from the next choose() on, search every scale's image x `weights` (device,
  /// one per pixel; null: no weights). `weights` must outlive those searches.
  void set_weights(const float* weights);
  /// Makes every scale's search image of the state's residual and picks the scale to clean (one
  /// host round trip per scale).
  Choice choose();

  /// The chosen scale's search image (valid until the next choose()).
  const float* masked(const Choice& c) const;

  /// The residual's own peak over the clean mask (what the divergence rule watches with
  /// --multiscale): the delta scale's search of the last choose() when it was that search, else a
  /// search of its own.
  Peak residual_peak();
  /// The residual changed outside choose() (an outer loop's re-imaged one): residual_peak() searches.
  void forget_peak() { residual_peak_.reset(); }

  /// From now on scale s searches only where masks[s] is set (--auto-mask's second phase).
  void restrict(const std::vector<std::vector<std::uint8_t>>& masks);

  bool is_delta(std::size_t scale) const { return !conv_[scale]; }
  /// delta = delta (x) the scale's kernel; model += delta (not for a delta scale).
  void spread(std::size_t scale, float* delta, float* model);
  /// out = `image` (NaN as 0) (x) the scale's kernel, as choose() makes the scale images (not for
  /// a delta scale): a joined run's planes. Uses the buffers of choose(): call after the
  /// chosen image has been read.
  void convolve_into(std::size_t scale, const float* image, float* out);

  /// Device bytes for these scales on width x height images.
  static std::size_t bytes_needed(const std::vector<CleanScale>& scales, std::size_t width, std::size_t height);

 private:
  GpuImageState& state_;
  const std::vector<CleanScale>& scales_;
  std::vector<std::unique_ptr<FftConvolverGpu>> conv_;
  std::vector<cuda::DeviceBuffer<std::uint8_t>> masks_;  // per scale once restricted; else the state's mask
  cuda::DeviceBuffer<float> finite_, image_, best_image_;
  bool best_is_own_ = false;
  const float* weights_ = nullptr;
  std::optional<Peak> residual_peak_;  // from the last choose(), when a delta scale searched the clean mask  // the chosen image is in best_image_ (not the state's masked residual)
};

}  // namespace gpuclean::clean::gpu

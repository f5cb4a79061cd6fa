#pragma once
// What GPU Högbom and GPU Clark share: the images on the device for the whole run, the
// statistics that drive the stopping rules (computed on the device; a few scalars come back),
// the component list, the restoration, and the bookkeeping of GPU memory.

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clean/beam.hpp"
#include "clean/deconvolver.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/image_stats.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/selector.hpp"

namespace gpuclean::clean::gpu {

class GpuImageState {
 public:
  /// Uploads the dirty image (as the residual) and the mask. `selector` is the backend name for
  /// the robust noise estimate (and Clark's active sets); an unknown one throws InvalidSettings.
  GpuImageState(GpuResources& resources, const CleanProblem& problem, const CleanSettings& settings);

  cudaStream_t stream() const { return stream_; }
  std::size_t width() const { return width_; }
  std::size_t height() const { return height_; }
  std::size_t size() const { return width_ * height_; }
  float* residual() { return residual_.data(); }
  float* masked() { return masked_.data(); }
  float* model() { return model_.data(); }
  /// An image-sized buffer free between the noise estimate and the next one (Clark's delta).
  float* scratch() { return scratch_.data(); }
  const std::uint8_t* mask() const { return mask_.data(); }
  const select::Selector& selector() const { return *selector_; }
  select::Workspace& workspace() { return workspace_; }

  /// The brightest cleanable pixel (same rule as clean::find_peak).
  Peak peak();
  /// max(--threshold, --auto-threshold x robust sigma), sigma from two GPU medians.
  double threshold(double* sigma);
  double model_flux();

  /// Room for `more` components after the `used` ones; grows the device list (kept contents).
  void reserve_components(std::size_t used, std::size_t more);
  std::size_t component_capacity() const { return comp_pixels_.size(); }
  std::uint32_t* comp_pixels() { return comp_pixels_.data(); }
  float* comp_fluxes() { return comp_fluxes_.data(); }

  /// The end of a run: residual, model and the first result.iterations components to the host,
  /// the restoration on the GPU when the problem asks for it (timed, with the quantiles of the
  /// restored image it asks for), the peak memory.
  void finish(const CleanProblem& problem, CleanResult& result);

  /// Notes the device memory in use now; the largest is reported as the peak.
  void sample_memory();
  std::size_t peak_memory() const { return peak_used_; }

 private:
  void download(CleanResult& result, std::size_t iterations);
  void restore(const CleanProblem& problem, CleanResult& result);

  GpuResources& resources_;
  cudaStream_t stream_;
  const CleanSettings& settings_;
  std::size_t width_, height_;
  cuda::DeviceBuffer<float> residual_, masked_, model_, scratch_;
  cuda::DeviceBuffer<std::uint8_t> mask_;
  cuda::DeviceBuffer<unsigned long long> scalars_;
  cuda::DeviceBuffer<double> sums_;
  cuda::DeviceBuffer<std::uint32_t> comp_pixels_;
  cuda::DeviceBuffer<float> comp_fluxes_;
  std::unique_ptr<select::Selector> selector_;
  select::Workspace workspace_;
  std::size_t n_finite_ = 0;
  std::size_t free_at_start_ = 0, peak_used_ = 0;
};

/// Device bytes a GPU run of this problem needs at its peak (conservative), for the check
/// before any work.
std::size_t gpu_bytes_needed(std::size_t width, std::size_t height, std::size_t psf_width, std::size_t psf_height,
                             const CleanSettings& settings);

/// Throws InsufficientGpuMemory (with the sizes, and what to do) when the run does not fit in
/// the free memory of the current device.
void check_gpu_memory(std::size_t width, std::size_t height, std::size_t psf_width, std::size_t psf_height,
                      const CleanSettings& settings);

}  // namespace gpuclean::clean::gpu

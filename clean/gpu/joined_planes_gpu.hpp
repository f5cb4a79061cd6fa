#pragma once
// The planes of a joined run on the GPU (plane_set.hpp; JoinedPlanesCpu is its reference): each
// plane's residual, model and delta image in one device array each, each plane's PSF spectrum
// and beam patch, the integration weights and the spectral fit. The integrated image the peaks
// are searched on is GpuImageState's residual; subtract() remakes it after every major cycle.

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/spectral_fit.hpp"
#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean::gpu {

class JoinedPlanesGpu {
 public:
  /// `patch`: the minor cycle's half-width.
  JoinedPlanesGpu(GpuResources& resources, const JoinedPlanes& planes, std::size_t patch, std::size_t width,
                  std::size_t height);

  int planes() const { return static_cast<int>(planes_.planes.size()); }
  float sidelobe() const { return sidelobe_; }

  /// Room for `more` components after the `used` ones (kept).
  void reserve_components(std::size_t used, std::size_t more);
  /// The request for the minor cycle whose first component is `first`; zeroes the deltas.
  JoinedMinorRequest request(std::size_t first);
  /// Each plane's delta through its own PSF out of its residual; the integrated residual and
  /// its masked copy (GpuImageState's) remade.
  void subtract(GpuImageState& st);

  /// The planes' images to the host (restored on the GPU with their beams, or `beam`), the
  /// components' plane fluxes, and the spectral terms when fitting.
  void finish(const PixelGaussian* beam, CleanResult& result);

  static std::size_t bytes_needed(std::size_t planes, std::size_t width, std::size_t height, std::size_t psf_width,
                                  std::size_t psf_height, std::size_t patch);

 private:
  GpuResources& resources_;
  cudaStream_t s_;
  const JoinedPlanes& planes_;
  std::size_t width_, height_, n_;
  std::optional<SpectralFit> fit_;
  float sidelobe_ = 0.0f;
  cuda::DeviceBuffer<float> residuals_, models_, deltas_, patches_, iweights_, projection_, comp_fluxes_;
  std::size_t comp_capacity_ = 0;
  std::vector<std::unique_ptr<FftConvolverGpu>> conv_;
};

}  // namespace gpuclean::clean::gpu

#pragma once
// clean::prepare_scales and clean::scale_minor_psf (scale_set.hpp) with the PSF's scale
// convolutions on the GPU: at 4096^2 the CPU's FFTW convolutions of the PSF would take seconds,
// cuFFT's take milliseconds. What comes back per scale is what the CPU computes: the PSF peak of
// PSF (x) K, the minor cycle's window of PSF (x) K (x) K over its divisor, and the exterior
// sidelobe (cuFFT and FFTW round differently in the last bits).

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/scale_set.hpp"
#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean::gpu {

/// Every scale's ScaleMinorPsf of PSFs of one size, the kernels' transforms made once (a joined
/// run asks for each of its planes' PSFs). Enqueued on resources.stream(); each call waits for it.
class ScaleMinorPsfsGpu {
 public:
  ScaleMinorPsfsGpu(GpuResources& resources, const std::vector<CleanScale>& scales, std::size_t psf_width,
                    std::size_t psf_height);

  /// For `psf`, whose image is at `d_psf` on the device: scale b's window divided by
  /// divide_by[b] (0: by its own once peak). A delta scale's sidelobe is measured here unless
  /// `delta_sidelobe` is given (>= 0).
  std::vector<ScaleMinorPsf> compute(const PreparedPsf& psf, const float* d_psf, const std::vector<float>& divide_by,
                                     float delta_sidelobe = -1.0f);

 private:
  GpuResources& resources_;
  const std::vector<CleanScale>& scales_;
  std::vector<std::unique_ptr<FftConvolverGpu>> conv_;  // per scale (null for a delta scale)
  cuda::DeviceBuffer<float> once_, twice_;
  cuda::DeviceBuffer<unsigned long long> sidelobe_;
};

/// `delta_sidelobe` is the delta scale's exterior sidelobe (GpuImageState computes it while the
/// PSF is on the device for its transform). Enqueued on resources.stream(); waits for it.
std::vector<CleanScale> prepare_scales_gpu(GpuResources& resources, const PreparedPsf& psf,
                                           const CleanSettings& settings, double beam_fwhm, std::size_t width,
                                           std::size_t height, float delta_sidelobe);

}  // namespace gpuclean::clean::gpu

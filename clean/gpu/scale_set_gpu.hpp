#pragma once
// clean::prepare_scales (scale_set.hpp) with the PSF's scale convolutions on the GPU: at 4096^2
// the CPU's FFTW convolutions of the PSF would take seconds, cuFFT's take milliseconds. What
// comes back per scale is what the CPU computes: the PSF peak of PSF (x) K, the minor cycle's
// window of PSF (x) K (x) K / that peak, and the exterior sidelobe (cuFFT and FFTW round
// differently in the last bits).

#include <cuda_runtime.h>

#include <vector>

#include "clean/gpu/gpu_resources.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean::gpu {

/// `delta_sidelobe` is the delta scale's exterior sidelobe (GpuImageState computes it while the
/// PSF is on the device for its transform). Enqueued on resources.stream(); waits for it.
std::vector<CleanScale> prepare_scales_gpu(GpuResources& resources, const PreparedPsf& psf,
                                           const CleanSettings& settings, double beam_fwhm, std::size_t width,
                                           std::size_t height, float delta_sidelobe);

}  // namespace gpuclean::clean::gpu

#pragma once
// --local-rms on the GPU: the noise map of local_rms.hpp (two separable passes, sums in double
// added tap by tap without fused multiply-adds, so the map equals the CPU's to the bit), its
// peak-search weights min_rms / rms, and the weighing of a search image.

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "clean/host_image.hpp"
#include "clean/local_rms.hpp"
#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean::gpu {

struct LocalRmsDevice {
  cuda::DeviceBuffer<float> map;      ///< rms, Jy/beam
  cuda::DeviceBuffer<float> weights;  ///< min_rms / rms, 0 where the map is 0
  double min_rms = 0.0, max_rms = 0.0;
};

/// The map of `image` (device, width x height; NaN pixels count as absent) by `settings.method`
/// for a window of FWHM `window_pixels` into `out` (its buffers made on first use), and its
/// weights: the CPU's local_noise_map and local_rms_weights, to the bit. Synchronises `s`.
void local_noise_gpu(cudaStream_t s, const float* image, std::size_t width, std::size_t height,
                     const LocalRmsSettings& settings, double window_pixels, LocalRmsDevice& out);

/// The map, to the host.
HostImage download_map(cudaStream_t s, const LocalRmsDevice& rms, std::size_t width, std::size_t height);

/// Device bytes local_rms_gpu holds at its peak for a width x height image (the weights kept).
std::size_t local_rms_gpu_bytes(std::size_t width, std::size_t height);

/// out[i] = in[i] x w[i], rounded as the CPU rounds it (in place when out == in).
void weigh(cudaStream_t s, const float* in, const float* w, float* out, std::size_t n);

}  // namespace gpuclean::clean::gpu

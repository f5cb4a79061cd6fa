#pragma once
// What callers outside clean/ ask of the GPU paths before any work, behind a host-only header:
// the device memory a run needs, whether it fits, and a dirty image handed over in device
// memory. A CPU-only build answers too (clean/gpu_memory_none.cpp), so callers need no CUDA.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "clean/beam.hpp"
#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"
#include "clean/host_image.hpp"

namespace gpuclean::clean {

/// Device bytes a GPU run of this problem needs at its peak (conservative), for the check
/// before any work: what the run allocates, the new PSF and beam spectra it may add to the
/// caches included. Without `beam`, the restoration is assumed no larger than the major cycles'
/// convolution (true unless the beam is wider than about half the image). 0 in a CPU-only build.
std::size_t gpu_bytes_needed(std::size_t width, std::size_t height, std::size_t psf_width, std::size_t psf_height,
                             const CleanSettings& settings, const PixelGaussian* beam = nullptr);

/// What one clean worker holds on its device in a batch of such runs: gpu_bytes_needed() and
/// the spectra and plans that its caches keep between runs.
std::size_t gpu_bytes_per_worker(std::size_t width, std::size_t height, std::size_t psf_width,
                                 std::size_t psf_height, const CleanSettings& settings,
                                 const PixelGaussian* beam = nullptr);

/// Throws InsufficientGpuMemory (with the sizes, and what to do) when the run does not fit in
/// the free memory of the current device.
void check_gpu_memory(std::size_t width, std::size_t height, std::size_t psf_width, std::size_t psf_height,
                      const CleanSettings& settings, const PixelGaussian* beam = nullptr);

/// What a joined run adds on the device for `planes` planes of width x height with PSFs of
/// psf_width x psf_height, the scales' patches of half-widths `patches`, `block` of the planes
/// on the device at once (0: all), active sets of up to `max_members` and `max_components`.
std::size_t joined_gpu_bytes(std::size_t planes, std::size_t block, std::size_t width, std::size_t height,
                             std::size_t psf_width, std::size_t psf_height, const std::vector<std::size_t>& patches,
                             std::size_t max_members, std::size_t max_components);

/// A dirty image in device memory, as the host needs to know it before a run: its NaN pixels.
/// Only a count and, when there are NaNs, a byte per pixel come back.
struct DeviceImageFacts {
  std::size_t nan_count = 0;
  std::vector<std::uint8_t> not_nan;  ///< 1 where the pixel is not NaN; empty when none is NaN
};

/// Throws InvalidInput when `image.data` is not device memory of the current device (and
/// InvalidSettings in a CPU-only build).
DeviceImageFacts inspect_device_image(const DeviceImage& image);

/// The image, to the host (after the work queued on its stream): a run that falls back to the CPU.
HostImage download_device_image(const DeviceImage& image);

}  // namespace gpuclean::clean

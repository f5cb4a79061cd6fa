#pragma once
// What callers outside clean/ ask of the GPU paths before any work, behind a host-only header:
// the device memory a run needs, whether it fits, and a dirty image handed over in device
// memory. A CPU-only build answers too (clean/gpu_memory_none.cpp), so callers need no CUDA.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "clean/beam.hpp"
#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"
#include "clean/host_image.hpp"

namespace gpuclean::clean {

/// What a run's device memory depends on besides its settings.
struct RunShape {
  std::size_t width = 0, height = 0;          ///< one plane's image
  std::size_t psf_width = 0, psf_height = 0;  ///< the PSF as given
  std::size_t planes = 1;                     ///< planes cleaned together (joined channels or polarizations)
  std::size_t device_planes = 0;              ///< joined: planes on the device at once (0: all of them)
  std::size_t split = 1;                      ///< joined: GPUs the planes are split over (the leader's need)
  /// The restoring beam. Without it, the restoration is assumed no larger than the major cycles'
  /// convolution (true unless the beam is wider than about half the image).
  std::optional<PixelGaussian> beam = std::nullopt;
};

/// Device bytes a GPU run of settings.algorithm on this shape needs at its peak (conservative),
/// for the check before any work: what the run allocates, the new PSF and beam spectra it may
/// add to the caches included. Each algorithm answers for what its own steps hold (the factory's
/// table, deconvolver_factory.cpp): Clark its active set, minor-cycle engine and joined planes,
/// Högbom nothing beyond the run's images. 0 in a CPU-only build.
std::size_t gpu_bytes_needed(const RunShape& shape, const CleanSettings& settings);

/// What one clean worker holds on its device in a batch of such runs: gpu_bytes_needed() and
/// the spectra and plans that its caches keep between runs.
std::size_t gpu_bytes_per_worker(const RunShape& shape, const CleanSettings& settings);

/// Readies the GPU on a thread of its own while the caller goes on (an imager grids meanwhile):
/// the CUDA context, cuFFT's first plan and the selection's first queries. Later calls do
/// nothing; wait_for_gpu_warm_up() joins it. Nothing in a CPU-only build or without a device.
void start_gpu_warm_up();
void wait_for_gpu_warm_up();
/// The same readying on each of `gpus` at once, returning when all are done (a run over several
/// GPUs calls it before its clock starts, not in its first plane's time). Failures are left to
/// the run to report.
void warm_up_gpus(const std::vector<int>& gpus);

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

#pragma once
// What the host needs to know of a dirty image in device memory (clean::DeviceImage) before a
// run, found on the device: its NaN pixels. Only a count and, when there are NaNs, a byte per
// pixel come back; the image itself stays where it is. And, for a run that falls back to the
// CPU, the image itself to the host.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/host_image.hpp"

namespace gpuclean::clean::gpu {

struct DeviceImageFacts {
  std::size_t nan_count = 0;
  std::vector<std::uint8_t> not_nan;  ///< 1 where the pixel is not NaN; empty when none is NaN
};

/// Throws InvalidInput when `image.data` is not device memory of the current device.
DeviceImageFacts inspect_device_image(const DeviceImage& image);

/// The image, to the host (after the work queued on its stream).
HostImage download_device_image(const DeviceImage& image);

}  // namespace gpuclean::clean::gpu

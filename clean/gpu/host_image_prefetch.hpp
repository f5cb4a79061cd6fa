#pragma once
// The host images a GPU run downloads its results into, allocated on host threads while the GPU
// works. A std::vector value-initialises its pixels, so the first touch of every page (the
// kernel's fault and zeroing, then the vector's own zero fill) happens on the constructing
// thread: about 0.2 s a GiB. At 16384^2 that was most of the run. Constructed here, the touch
// overlaps the GPU's set-up and CLEAN, one thread per image, and the download then only copies.

#include <cstddef>
#include <future>

#include "clean/host_image.hpp"

namespace gpuclean::clean::gpu {

class HostImagePrefetch {
 public:
  /// Starts allocating a width x height image now: on its own thread when it is at least
  /// kThreadedPixels (smaller ones are made on the caller's thread when taken).
  HostImagePrefetch(std::size_t width, std::size_t height);
  HostImagePrefetch(const HostImagePrefetch&) = delete;
  HostImagePrefetch& operator=(const HostImagePrefetch&) = delete;

  /// The image (all zeros), waiting for its thread if need be. Once only.
  HostImage take();

  /// Below this many pixels (16 MiB) a thread costs more than the touch it hides.
  static constexpr std::size_t kThreadedPixels = std::size_t{1} << 22;

 private:
  std::size_t width_, height_;
  std::future<HostImage> pending_;  // valid() only when a thread makes the image
  bool taken_ = false;
};

}  // namespace gpuclean::clean::gpu

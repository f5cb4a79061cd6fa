#include "clean/gpu/host_image_prefetch.hpp"

#include <stdexcept>

namespace gpuclean::clean::gpu {

HostImagePrefetch::HostImagePrefetch(std::size_t width, std::size_t height) : width_(width), height_(height) {
  if (width * height >= kThreadedPixels) {
    pending_ = std::async(std::launch::async, [width, height] { return HostImage(width, height); });
  }
}

HostImage HostImagePrefetch::take() {
  if (taken_) throw std::logic_error("HostImagePrefetch::take called twice");
  taken_ = true;
  if (pending_.valid()) return pending_.get();
  return HostImage(width_, height_);
}

}  // namespace gpuclean::clean::gpu

#pragma once
#include <cstddef>
#include <vector>

namespace gpuclean::clean {

/// A row-major float image on the host: pixel (x, y) is pixels[y * width + x]. NaN = missing data.
struct HostImage {
  std::size_t width = 0;
  std::size_t height = 0;
  std::vector<float> pixels;

  HostImage() = default;
  HostImage(std::size_t w, std::size_t h, float fill = 0.0f) : width(w), height(h), pixels(w * h, fill) {}

  std::size_t size() const { return pixels.size(); }
  float& at(std::size_t x, std::size_t y) { return pixels[y * width + x]; }
  float at(std::size_t x, std::size_t y) const { return pixels[y * width + x]; }
};

}  // namespace gpuclean::clean

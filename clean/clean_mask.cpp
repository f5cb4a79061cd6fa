#include "clean/clean_mask.hpp"

#include <cmath>

#include "clean/errors.hpp"

namespace gpuclean::clean {

namespace {

template <class IsNan>
std::vector<std::uint8_t> clean_mask(std::size_t width, std::size_t height, const IsNan& is_nan,
                                     const HostImage* user_mask, double border_percent) {
  if (user_mask && (user_mask->width != width || user_mask->height != height)) {
    throw InvalidInput("the mask is " + std::to_string(user_mask->width) + "x" +
                       std::to_string(user_mask->height) + " but the image is " +
                       std::to_string(width) + "x" + std::to_string(height) +
                       "; give a mask made on the same grid.");
  }
  // WSClean's -clean-border: a percentage of the size on each side.
  const auto bx = static_cast<std::size_t>(std::floor(width * border_percent / 100.0));
  const auto by = static_cast<std::size_t>(std::floor(height * border_percent / 100.0));
  std::vector<std::uint8_t> mask(width * height, 0);
  for (std::size_t y = by; y + by < height; ++y) {
    for (std::size_t x = bx; x + bx < width; ++x) {
      const std::size_t i = y * width + x;
      if (is_nan(i)) continue;
      if (user_mask) {
        const float m = user_mask->pixels[i];
        if (std::isnan(m) || m == 0.0f) continue;
      }
      mask[i] = 1;
    }
  }
  return mask;
}

}  // namespace

std::vector<std::uint8_t> make_clean_mask(const HostImage& dirty, const HostImage* user_mask,
                                          double border_percent) {
  return clean_mask(dirty.width, dirty.height, [&](std::size_t i) { return std::isnan(dirty.pixels[i]); }, user_mask,
                    border_percent);
}

std::vector<std::uint8_t> make_clean_mask(std::size_t width, std::size_t height,
                                          const std::vector<std::uint8_t>& not_nan, const HostImage* user_mask,
                                          double border_percent) {
  return clean_mask(width, height, [&](std::size_t i) { return !not_nan.empty() && !not_nan[i]; }, user_mask,
                    border_percent);
}

}  // namespace gpuclean::clean

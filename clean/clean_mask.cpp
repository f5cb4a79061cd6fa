#include "clean/clean_mask.hpp"

#include <cmath>

#include "clean/errors.hpp"

namespace gpuclean::clean {

std::vector<std::uint8_t> make_clean_mask(const HostImage& dirty, const HostImage* user_mask,
                                          double border_percent) {
  if (user_mask && (user_mask->width != dirty.width || user_mask->height != dirty.height)) {
    throw InvalidInput("the mask is " + std::to_string(user_mask->width) + "x" +
                       std::to_string(user_mask->height) + " but the image is " +
                       std::to_string(dirty.width) + "x" + std::to_string(dirty.height) +
                       "; give a mask made on the same grid.");
  }
  // WSClean's -clean-border: a percentage of the size on each side.
  const auto bx = static_cast<std::size_t>(std::floor(dirty.width * border_percent / 100.0));
  const auto by = static_cast<std::size_t>(std::floor(dirty.height * border_percent / 100.0));
  std::vector<std::uint8_t> mask(dirty.size(), 0);
  for (std::size_t y = by; y + by < dirty.height; ++y) {
    for (std::size_t x = bx; x + bx < dirty.width; ++x) {
      const std::size_t i = y * dirty.width + x;
      if (std::isnan(dirty.pixels[i])) continue;
      if (user_mask) {
        const float m = user_mask->pixels[i];
        if (std::isnan(m) || m == 0.0f) continue;
      }
      mask[i] = 1;
    }
  }
  return mask;
}

}  // namespace gpuclean::clean

#pragma once
// Which pixels may receive components: not NaN, inside the user mask, outside the border.

#include <cstdint>
#include <vector>

#include "clean/host_image.hpp"

namespace gpuclean::clean {

/// 1 where a component may be placed. `user_mask` (may be null) must match the image size;
/// its non-zero, non-NaN pixels may be cleaned.
std::vector<std::uint8_t> make_clean_mask(const HostImage& dirty, const HostImage* user_mask,
                                          double border_percent);

/// The same for a dirty image that is not on the host (the Python package's CUDA arrays):
/// `not_nan` marks its pixels that are not NaN (empty: none is NaN).
std::vector<std::uint8_t> make_clean_mask(std::size_t width, std::size_t height,
                                          const std::vector<std::uint8_t>& not_nan, const HostImage* user_mask,
                                          double border_percent);

}  // namespace gpuclean::clean

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

}  // namespace gpuclean::clean

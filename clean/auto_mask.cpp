#include "clean/auto_mask.hpp"

#include <algorithm>

namespace gpuclean::clean {

std::vector<std::pair<int, int>> kernel_footprint(const HostImage& kernel) {
  const float peak = *std::max_element(kernel.pixels.begin(), kernel.pixels.end());
  const int cx = static_cast<int>(kernel.width / 2), cy = static_cast<int>(kernel.height / 2);
  std::vector<std::pair<int, int>> out;
  for (std::size_t y = 0; y < kernel.height; ++y)
    for (std::size_t x = 0; x < kernel.width; ++x)
      if (kernel.at(x, y) >= 0.01f * peak) out.emplace_back(static_cast<int>(x) - cx, static_cast<int>(y) - cy);
  return out;
}

std::vector<std::vector<std::uint8_t>> auto_masks(const std::vector<const HostImage*>& kernels,
                                                  const std::vector<Component>& components,
                                                  const std::vector<std::uint8_t>& base, std::size_t width,
                                                  std::size_t height) {
  std::vector<std::vector<std::uint8_t>> masks(kernels.size(), std::vector<std::uint8_t>(base.size(), 0));
  std::vector<std::vector<std::pair<int, int>>> footprints;
  for (const HostImage* k : kernels) footprints.push_back(kernel_footprint(*k));
  const auto w = static_cast<long>(width), h = static_cast<long>(height);
  for (const Component& c : components) {
    for (const auto& [dx, dy] : footprints[c.scale]) {
      const long x = static_cast<long>(c.x) + dx, y = static_cast<long>(c.y) + dy;
      if (x >= 0 && y >= 0 && x < w && y < h) masks[c.scale][static_cast<std::size_t>(y * w + x)] = 1;
    }
  }
  for (auto& m : masks)
    for (std::size_t i = 0; i < m.size(); ++i) m[i] &= base[i];
  return masks;
}

void note_auto_mask(CleanResult& result, const std::vector<std::vector<std::uint8_t>>& masks) {
  result.diagnostics.auto_mask_cycle = result.stop.major_cycles + 1;
  result.diagnostics.auto_mask_pixels.clear();
  for (const auto& m : masks) result.diagnostics.auto_mask_pixels.push_back(static_cast<std::size_t>(std::count(m.begin(), m.end(), 1)));
}

}  // namespace gpuclean::clean

#include "clean/minor_cycle_cpu.hpp"

#include <cmath>
#include <limits>

#include "clean/packed_peak.hpp"

namespace gpuclean::clean {

MinorCycleCpu::MinorCycleCpu(const PreparedPsf& psf, std::size_t half_width, std::size_t width, std::size_t pixels)
    : psf_(&psf), hw_(static_cast<std::int32_t>(half_width)), width_(width), slot_(pixels, -1) {}

std::size_t MinorCycleCpu::index_of(const ActiveMember& c) const {
  return static_cast<std::size_t>(c.y) * width_ + static_cast<std::size_t>(c.x);
}

void MinorCycleCpu::subtract(ActiveMember& a, const ActiveMember& c, float flux) const {
  const std::int32_t dx = a.x - c.x, dy = a.y - c.y;
  if (dx < -hw_ || dx > hw_ || dy < -hw_ || dy > hw_) return;
  const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(psf_->peak_x) + dx;
  const std::ptrdiff_t py = static_cast<std::ptrdiff_t>(psf_->peak_y) + dy;
  if (px < 0 || py < 0 || px >= static_cast<std::ptrdiff_t>(psf_->image.width) ||
      py >= static_cast<std::ptrdiff_t>(psf_->image.height))
    return;
  // Rounded as the GPU rounds it (subtract_rn); a weight of 1 changes nothing.
  a.value -= (flux * a.weight) * psf_->image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
}

std::size_t MinorCycleCpu::run(std::vector<ActiveMember>& active, double limit, double gain, bool allow_negative,
                               std::size_t budget, std::vector<Component>* components,
                               std::vector<std::uint64_t>* peaks) {
  for (std::size_t j = 0; j < active.size(); ++j) slot_[index_of(active[j])] = static_cast<std::int32_t>(j);
  const std::size_t patch_area = static_cast<std::size_t>(2 * hw_ + 1) * static_cast<std::size_t>(2 * hw_ + 1);
  auto key = [allow_negative](float v) { return allow_negative ? std::abs(v) : v; };
  std::size_t made = 0;
  while (made < budget) {
    std::size_t best = 0;
    float best_key = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < active.size(); ++j) {  // member order: the first maximum wins ties
      const float k = key(active[j].value);
      if (k > best_key) {
        best_key = k;
        best = j;
      }
    }
    if (active.empty() || !(best_key > limit)) break;
    const ActiveMember c = active[best];
    const float flux = static_cast<float>(gain) * (c.value / c.weight);
    components->push_back({static_cast<std::uint32_t>(c.x), static_cast<std::uint32_t>(c.y), flux});
    if (peaks) peaks->push_back(pack_peak(best_key, static_cast<std::uint32_t>(index_of(c)), c.value < 0.0f));
    ++made;
    if (active.size() <= patch_area) {
      for (auto& a : active) subtract(a, c, flux);
    } else {
      for (std::int32_t dy = -hw_; dy <= hw_; ++dy) {
        const std::int32_t y = c.y + dy;
        if (y < 0 || static_cast<std::size_t>(y) * width_ >= slot_.size()) continue;
        for (std::int32_t dx = -hw_; dx <= hw_; ++dx) {
          const std::int32_t x = c.x + dx;
          if (x < 0 || static_cast<std::size_t>(x) >= width_) continue;
          const std::int32_t s = slot_[static_cast<std::size_t>(y) * width_ + static_cast<std::size_t>(x)];
          if (s >= 0) subtract(active[static_cast<std::size_t>(s)], c, flux);
        }
      }
    }
  }
  for (const auto& a : active) slot_[index_of(a)] = -1;
  return made;
}

}  // namespace gpuclean::clean

#include "clean/minor_cycle_cpu.hpp"

#include <algorithm>
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

template <typename Fn>
void MinorCycleCpu::for_each_near(const std::vector<ActiveMember>& active, const ActiveMember& c, Fn&& fn) const {
  const std::size_t patch_area = static_cast<std::size_t>(2 * hw_ + 1) * static_cast<std::size_t>(2 * hw_ + 1);
  if (active.size() <= patch_area) {
    for (std::size_t j = 0; j < active.size(); ++j) fn(j);
    return;
  }
  for (std::int32_t dy = -hw_; dy <= hw_; ++dy) {
    const std::int32_t y = c.y + dy;
    if (y < 0 || static_cast<std::size_t>(y) * width_ >= slot_.size()) continue;
    for (std::int32_t dx = -hw_; dx <= hw_; ++dx) {
      const std::int32_t x = c.x + dx;
      if (x < 0 || static_cast<std::size_t>(x) >= width_) continue;
      const std::int32_t s = slot_[static_cast<std::size_t>(y) * width_ + static_cast<std::size_t>(x)];
      if (s >= 0) fn(static_cast<std::size_t>(s));
    }
  }
}

std::size_t MinorCycleCpu::best_member(const std::vector<ActiveMember>& active, bool allow_negative,
                                       float* best_key) const {
  std::size_t best = 0;
  *best_key = -std::numeric_limits<float>::infinity();
  for (std::size_t j = 0; j < active.size(); ++j) {  // member order: the first maximum wins ties
    const float k = allow_negative ? std::abs(active[j].value) : active[j].value;
    if (k > *best_key) {
      *best_key = k;
      best = j;
    }
  }
  return best;
}

std::size_t MinorCycleCpu::run(std::vector<ActiveMember>& active, double limit, double gain, bool allow_negative,
                               std::size_t budget, std::vector<Component>* components,
                               std::vector<std::uint64_t>* peaks) {
  for (std::size_t j = 0; j < active.size(); ++j) slot_[index_of(active[j])] = static_cast<std::int32_t>(j);
  std::size_t made = 0;
  while (made < budget) {
    float best_key = 0.0f;
    const std::size_t best = best_member(active, allow_negative, &best_key);
    if (active.empty() || !(best_key > limit)) break;
    const ActiveMember c = active[best];
    const float flux = static_cast<float>(gain) * (c.value / c.weight);
    components->push_back({static_cast<std::uint32_t>(c.x), static_cast<std::uint32_t>(c.y), flux});
    if (peaks) peaks->push_back(pack_peak(best_key, static_cast<std::uint32_t>(index_of(c)), c.value < 0.0f));
    ++made;
    for_each_near(active, c, [&](std::size_t j) { subtract(active[j], c, flux); });
  }
  for (const auto& a : active) slot_[index_of(a)] = -1;
  return made;
}

float integrated_flux(const JoinedMinor& j, const float* plane_fluxes) {
  if (j.join == Join::kPolarizations) return plane_fluxes[0];
  float s = 0.0f;
  for (std::size_t p = 0; p < j.planes(); ++p) s += j.weights[p] * plane_fluxes[p];
  return s;
}

std::size_t MinorCycleCpu::run_joined(std::vector<ActiveMember>& active, std::vector<float>& values,
                                      const JoinedMinor& j, double limit, double gain, bool allow_negative,
                                      std::size_t budget, std::vector<Component>* components,
                                      std::vector<float>* plane_fluxes, std::vector<std::uint64_t>* peaks) {
  const std::size_t np = j.planes();
  for (std::size_t m = 0; m < active.size(); ++m) slot_[index_of(active[m])] = static_cast<std::int32_t>(m);
  std::vector<float> fitted(np), flux(np);
  std::size_t made = 0;
  while (made < budget) {
    float best_key = 0.0f;
    const std::size_t best = best_member(active, allow_negative, &best_key);
    if (active.empty() || !(best_key > limit)) break;
    const ActiveMember c = active[best];
    const float* v = values.data() + best * np;
    if (j.fit) j.fit->fit(v, fitted.data());
    else std::copy(v, v + np, fitted.begin());
    for (std::size_t p = 0; p < np; ++p) flux[p] = static_cast<float>(gain) * fitted[p];
    components->push_back({static_cast<std::uint32_t>(c.x), static_cast<std::uint32_t>(c.y),
                           integrated_flux(j, flux.data())});
    plane_fluxes->insert(plane_fluxes->end(), flux.begin(), flux.end());
    if (peaks) peaks->push_back(pack_peak(best_key, static_cast<std::uint32_t>(index_of(c)), c.value < 0.0f));
    ++made;
    for_each_near(active, c, [&](std::size_t m) {
      ActiveMember& a = active[m];
      const std::int32_t dx = a.x - c.x, dy = a.y - c.y;
      if (dx < -hw_ || dx > hw_ || dy < -hw_ || dy > hw_) return;
      float* vm = values.data() + m * np;
      bool inside = false;
      for (std::size_t p = 0; p < np; ++p) {
        const PreparedPsf& psf = *j.psfs[p];
        const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(psf.peak_x) + dx;
        const std::ptrdiff_t py = static_cast<std::ptrdiff_t>(psf.peak_y) + dy;
        if (px < 0 || py < 0 || px >= static_cast<std::ptrdiff_t>(psf.image.width) ||
            py >= static_cast<std::ptrdiff_t>(psf.image.height))
          return;  // the planes' windows share one geometry: outside one, outside all
        vm[p] -= flux[p] * psf.image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
        inside = true;
      }
      if (inside) a.value = integrate(j.join, vm, 1, j.weights) * a.weight;
    });
  }
  for (const auto& a : active) slot_[index_of(a)] = -1;
  return made;
}

}  // namespace gpuclean::clean

#pragma once
// Clark's minor cycle on the CPU: Högbom on the active set with the beam patch only. The
// reference the GPU minor cycle is checked against, and the building block of the statement of
// the cluster rule (interaction_clusters.hpp).

#include <cstdint>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/psf.hpp"

namespace gpuclean::clean {

/// A member of a major cycle's active set: its pixel and its residual value, as weighed for the
/// peak search (--local-rms: value = residual x weight; otherwise weight 1).
struct ActiveMember {
  std::int32_t x = 0, y = 0;
  float value = 0.0f;
  float weight = 1.0f;
};

class MinorCycleCpu {
 public:
  /// `pixels` = width x height of the image.
  MinorCycleCpu(const PreparedPsf& psf, std::size_t half_width, std::size_t width, std::size_t pixels);

  /// From the next run() on, subtract `psf` within `half_width` of its peak (a multiscale run
  /// switches to the chosen scale's PSF each major cycle). `psf` must outlive those runs.
  void set_psf(const PreparedPsf& psf, std::size_t half_width) {
    psf_ = &psf;
    hw_ = static_cast<std::int32_t>(half_width);
  }

  /// Högbom on `active` (members in pixel order; their values are updated) until the best member
  /// is at or below `limit`, or `budget` components were made. A component's flux is gain x its
  /// value / its weight; it takes flux x weight x PSF off each member's (weighed) value. The best member is the first
  /// maximum of |x| (or x without negative components) in member order, so ties go to the lowest
  /// pixel. Appends the components; returns how many. `peaks`, when given, receives each
  /// component's packed peak (packed_peak.hpp: its key, pixel and sign) as it was chosen.
  std::size_t run(std::vector<ActiveMember>& active, double limit, double gain, bool allow_negative,
                  std::size_t budget, std::vector<Component>* components,
                  std::vector<std::uint64_t>* peaks = nullptr);

 private:
  std::size_t index_of(const ActiveMember& c) const;
  void subtract(ActiveMember& a, const ActiveMember& c, float flux) const;

  const PreparedPsf* psf_;
  std::int32_t hw_;
  std::size_t width_;
  std::vector<std::int32_t> slot_;  // pixel -> position in the active set, -1 if absent
};

}  // namespace gpuclean::clean

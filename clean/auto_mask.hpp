#pragma once
// WSClean's --auto-mask: clean without a mask (beyond the user's) down to SIGMA x the robust
// noise, then build a mask from where the components went and clean on inside it only, down to
// the final threshold (--auto-threshold, --threshold). The mask is per scale: scale s may then
// place components only within the footprints of the scale-s components of the first phase (its
// kernel's pixels of at least 1% of its peak; a delta function's footprint is its pixel). The
// phase logic is shared by the CPU and GPU loops; each builds its masks where its images live.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"
#include "clean/host_image.hpp"

namespace gpuclean::clean {

class AutoMaskPhase {
 public:
  explicit AutoMaskPhase(const CleanSettings& settings)
      : sigmas_(settings.auto_mask), absolute_(settings.auto_mask_absolute),
        masking_(settings.auto_mask > 0 || settings.auto_mask_absolute > 0) {}

  /// True while the first phase (no auto-mask yet) runs.
  bool first_phase() const { return masking_; }
  /// The threshold in force: the final one, or in the first phase max(final, SIGMA x sigma,
  /// the absolute auto-mask threshold), as radler combines them.
  double threshold(double final_threshold, double sigma) const {
    if (!masking_) return final_threshold;
    return std::max({final_threshold, sigmas_ * sigma, absolute_});
  }
  /// Called when the first phase reached its threshold: from now on the final threshold rules.
  void switch_to_mask() { masking_ = false; }

 private:
  double sigmas_;
  double absolute_;
  bool masking_;
};

/// The pixel offsets of a kernel's footprint: its values of at least 1% of its peak.
std::vector<std::pair<int, int>> kernel_footprint(const HostImage& kernel);

/// Per scale (kernels[s]): `base` AND the union of the footprints of that scale's components.
std::vector<std::vector<std::uint8_t>> auto_masks(const std::vector<const HostImage*>& kernels,
                                                  const std::vector<Component>& components,
                                                  const std::vector<std::uint8_t>& base, std::size_t width,
                                                  std::size_t height);

/// Records the switch in `result`: the cycle about to open, and each mask's pixel count.
void note_auto_mask(CleanResult& result, const std::vector<std::vector<std::uint8_t>>& masks);

}  // namespace gpuclean::clean

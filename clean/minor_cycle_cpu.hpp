#pragma once
// Clark's minor cycle on the CPU: Högbom on the active set with the beam patch only. The
// reference the GPU minor cycle is checked against, and the building block of the statement of
// the cluster rule (interaction_clusters.hpp).

#include <cstdint>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/plane_set.hpp"
#include "clean/psf.hpp"
#include "clean/spectral_fit.hpp"

namespace gpuclean::clean {

/// A member of a major cycle's active set: its pixel and its residual value, as weighed for the
/// peak search (--local-rms: value = residual x weight; otherwise weight 1).
struct ActiveMember {
  std::int32_t x = 0, y = 0;
  float value = 0.0f;
  float weight = 1.0f;
};

/// A joined run's minor cycle (plane_set.hpp): every member carries one value per plane; its
/// ActiveMember::value is their integration x its weight, the key the peak is chosen by.
struct JoinedMinor {
  Join join = Join::kChannels;
  std::vector<float> weights;             ///< integration_weights()
  std::vector<const PreparedPsf*> psfs;   ///< each plane's minor-cycle PSF (same peak pixel and size)
  const SpectralFit* fit = nullptr;       ///< --fit-spectral-pol
  std::size_t planes() const { return weights.size(); }
};

/// The integrated flux a component's plane fluxes stand for: the channels' weighted mean, or
/// Stokes I's (the first plane) for polarizations.
float integrated_flux(const JoinedMinor& j, const float* plane_fluxes);

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

  /// The joined form: `values` holds each member's plane values (member-major) and is updated.
  /// A component takes gain x the member's plane values (fitted, with j.fit) in every plane,
  /// appended to `plane_fluxes`, and plane p subtracts its share through psfs[p]; a member's key
  /// is then remade from its plane values. The one-plane run above is not this with one plane:
  /// it keeps the weighed value itself (the GPU engine's rounding).
  std::size_t run_joined(std::vector<ActiveMember>& active, std::vector<float>& values, const JoinedMinor& j,
                         double limit, double gain, bool allow_negative, std::size_t budget,
                         std::vector<Component>* components, std::vector<float>* plane_fluxes,
                         std::vector<std::uint64_t>* peaks = nullptr);

 private:
  /// Calls fn(member index) for every member within the patch of member `c` (all members when
  /// the set is smaller than the patch).
  template <typename Fn>
  void for_each_near(const std::vector<ActiveMember>& active, const ActiveMember& c, Fn&& fn) const;
  std::size_t best_member(const std::vector<ActiveMember>& active, bool allow_negative, float* best_key) const;

  std::size_t index_of(const ActiveMember& c) const;
  void subtract(ActiveMember& a, const ActiveMember& c, float flux) const;

  const PreparedPsf* psf_;
  std::int32_t hw_;
  std::size_t width_;
  std::vector<std::int32_t> slot_;  // pixel -> position in the active set, -1 if absent
};

}  // namespace gpuclean::clean

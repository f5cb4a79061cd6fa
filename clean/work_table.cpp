#include "clean/work_table.hpp"

#include <string>

#include "clean/clean_mask.hpp"
#include "clean/errors.hpp"

namespace gpuclean::clean {

std::size_t WorkTable::index(std::size_t channel, std::size_t polarization) const {
  for (std::size_t i = 0; i < planes.size(); ++i)
    if (planes[i].channel == channel && planes[i].polarization == polarization) return i;
  throw InvalidInput("the table has no plane for channel " + std::to_string(channel) + ", polarization " +
                     std::to_string(polarization) + ".");
}

WorkTable one_plane_table(const HostImage& dirty, const PreparedPsf& psf, const std::vector<std::uint8_t>* mask,
                          const PixelGaussian* beam) {
  WorkTable t;
  t.width = dirty.width;
  t.height = dirty.height;
  t.planes.push_back({&dirty, &psf});
  t.planes.back().beam = beam;
  t.mask = mask;
  t.groups = {{0}};
  return t;
}

void group_planes(WorkTable& t, const CleanSettings& s, JoinRule rule) {
  t.groups.clear();
  t.join.reset();
  if (t.planes.empty()) throw InvalidInput("there is no plane to clean.");
  if (rule == JoinRule::kTable) {
    if (t.channels > 1 && t.polarizations > 1)
      throw InvalidSettings("gpuclean joins channels or polarizations, not both at once; image one polarization per "
                            "run (e.g. -pol i) or one channel (leave out -channels-out).");
    t.groups.emplace_back();
    for (std::size_t i = 0; i < t.planes.size(); ++i) t.groups.back().push_back(i);
    if (t.planes.size() > 1) t.join = t.channels > 1 ? Join::kChannels : Join::kPolarizations;
    return;
  }
  if (s.join_channels) {
    if (t.channels < 2) throw InvalidSettings("--join-channels needs at least two channels; the input has one.");
    t.join = Join::kChannels;
    for (std::size_t p = 0; p < t.polarizations; ++p) {
      t.groups.emplace_back();
      for (std::size_t c = 0; c < t.channels; ++c) t.groups.back().push_back(t.index(c, p));
    }
    return;
  }
  if (s.join_polarizations) {
    if (t.polarizations < 2)
      throw InvalidSettings("--join-polarizations needs at least two Stokes planes; the input has one.");
    t.join = Join::kPolarizations;
    for (std::size_t c = 0; c < t.channels; ++c) {
      t.groups.emplace_back();
      for (std::size_t p = 0; p < t.polarizations; ++p) t.groups.back().push_back(t.index(c, p));
    }
    return;
  }
  for (std::size_t i = 0; i < t.planes.size(); ++i) t.groups.push_back({i});
}

GroupProblem::GroupProblem(const WorkTable& t, std::size_t group, const CleanSettings& s, const ProblemExtras* extras)
    : planes_(t.groups.at(group)) {
  const WorkPlane& first = t.planes[planes_.front()];
  const HostImage* dirty = first.dirty;
  const PreparedPsf* psf = first.psf;
  if (first.beam) beam_ = *first.beam;
  if (joined()) {
    joined_.join = *t.join;
    joined_.fit = s.spectral_fit();
    std::vector<std::string> pols;
    for (std::size_t i : planes_) {
      const WorkPlane& p = t.planes[i];
      joined_.planes.push_back({p.dirty, p.psf, p.frequency_hz, p.weight, p.beam});
      pols.push_back(p.pol);
    }
    if (joined_.join == Join::kPolarizations)
      joined_.polarization_factor = t.polarization_factor > 0.0 ? t.polarization_factor : polarization_factor(pols);
    integrated_ = joined_problem_images(joined_);
    dirty = &integrated_->dirty;
    psf = &integrated_->psf;
    // A joined group restores with the integrated PSF's beam unless the beam is given.
    if (beam_ && !s.beam_shape) beam_ = fit_psf_beam(integrated_->psf, s.beam_fit);
  }
  if (!t.mask || joined()) mask_ = make_clean_mask(*dirty, t.fits_mask, s.clean_border_percent);
  const std::vector<std::uint8_t>& mask = t.mask && !joined() ? *t.mask : mask_;
  problem_.emplace(CleanProblem{*dirty, *psf, mask, beam_ ? &*beam_ : nullptr});
  if (joined()) problem_->joined = &joined_;
  if (extras) {
    problem_->observer = extras->observer;
    problem_->keep_noise_map = extras->keep_noise_map;
    problem_->dirty_on_device = extras->dirty_on_device;
  }
}

}  // namespace gpuclean::clean

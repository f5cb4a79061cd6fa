#include "app/image/clean_groups.hpp"

#include <algorithm>

#include "app/image/psf_beam.hpp"

namespace gpuclean::app {

std::vector<std::vector<std::size_t>> clean_groups(std::size_t channels, bool joined) {
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t c = 0; c < channels; ++c) {
    if (!joined || groups.empty()) groups.emplace_back();
    groups.back().push_back(c);
  }
  return groups;
}

double group_beam_pixels(const std::vector<imaging::ChannelImage>& channels, const std::vector<std::size_t>& group,
                         const imaging::ImageGeometry& image, double taper_fwhm_rad) {
  double beam = 0;
  for (std::size_t c : group) {
    const imaging::ChannelImage& ch = channels.at(c);
    if (!(ch.theoretic_beam_rad > 0)) continue;  // no baseline: WSClean's 1 / 0 is not finite
    const double b = initial_beam_estimate(ch, image, taper_fwhm_rad);  // WSClean's theoreticBeamSize
    beam = beam == 0 ? b : std::min(beam, b);
  }
  return beam / image.scale;
}

clean::CleanSettings group_settings(const ImageOptions& o, double beam_pixels) {
  clean::CleanSettings s = o.deconvolution.settings;  // s.mgain stays 1: the round gain is -mgain
  if (o.device == clean::Device::kCpu) s.device = clean::Device::kCpu;
  if (beam_pixels > 0) s.multiscale.beam_pixels = s.local_rms.beam_pixels = beam_pixels;
  return s;
}

}  // namespace gpuclean::app

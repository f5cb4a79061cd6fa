#include "app/image/psf_beam.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "clean/beam.hpp"

namespace gpuclean::app {

double initial_beam_estimate(const imaging::ChannelImage& c, const imaging::ImageGeometry& image,
                             double taper_fwhm_rad) {
  return std::max({c.theoretic_beam_rad, image.scale, taper_fwhm_rad});
}

io::BeamKeywords fit_wsclean_beam(const std::vector<double>& psf, const imaging::ImageGeometry& image,
                                  double initial_rad, const RestoringBeamOptions& beam) {
  if (psf.empty()) return {};
  // WSClean fits the PSF it writes (floats, normalised at the centre, non-finite pixels made 0), in
  // a box around the centre.
  clean::HostImage h(image.width, image.height);
  for (std::size_t i = 0; i < psf.size(); ++i) {
    const auto v = static_cast<float>(psf[i]);
    h.pixels[i] = std::isfinite(v) ? v : 0.0f;
  }
  const double box_scale = beam.fitting_size;  // -beam-fitting-size (default 10)
  double estimate = initial_rad / image.scale;
  // The box: box_scale × the beam, at least box_scale pixels, even.
  auto box_for = [box_scale](double beam_px) {
    std::size_t n = std::max<std::size_t>(static_cast<std::size_t>(std::ceil(box_scale)),
                                          static_cast<std::size_t>(std::ceil(beam_px * box_scale)));
    return n % 2 ? n + 1 : n;
  };
  std::size_t preferred = box_for(estimate);
  // Pixels to degrees as WSClean: the FWHM × (δx + δy)/2 in radians, then × 180/π.
  const auto to_deg = [&image](double pixels) { return pixels * 0.5 * (image.scale + image.scale) * 180.0 / M_PI; };
  if (beam.circular) {
    // WSClean 3.1's circular fit: its box check compares the image with the box (always large
    // enough), so one fit in the first box.
    const std::size_t bw = std::min(preferred, image.width), bh = std::min(preferred, image.height);
    const double fwhm = clean::fit_psf_beam_wsclean_circular(h, bw, bh, estimate);
    return {to_deg(fwhm), to_deg(fwhm), 0.0};
  }
  clean::WscleanEllipse e;
  if (preferred < image.width || preferred < image.height) {
    // Refitted in a box grown to box_scale × the fitted major axis (from the larger of it and the
    // estimate), at most 5 fits, until the major axis × box_scale × 0.8 fits the box.
    for (int iteration = 0; iteration < 5; ++iteration) {
      const std::size_t bw = std::min(preferred, image.width), bh = std::min(preferred, image.height);
      e = clean::fit_psf_beam_wsclean_box(h, bw, bh, estimate, !beam.with_negatives);
      const bool large_enough = (e.major * box_scale * 0.8 < static_cast<double>(bw) || bw >= image.width) &&
                                (e.major * box_scale * 0.8 < static_cast<double>(bh) || bh >= image.height);
      if (large_enough) break;
      preferred = box_for(e.major);
      estimate = std::max(e.major, estimate);
    }
  } else {
    e = clean::fit_psf_beam_wsclean_box(h, image.width, image.height, estimate, !beam.with_negatives);
  }
  // WSClean writes the angle as it comes, in (−180°, 180°].
  return {to_deg(e.major), to_deg(e.minor), e.position_angle * 180.0 / M_PI};
}

io::BeamKeywords channel_beam(const ImageOptions& o, const imaging::ChannelImage& c) {
  if (const auto& given = o.deconvolution.settings.beam_shape)
    return {given->bmaj_arcsec / 3600, given->bmin_arcsec / 3600, given->bpa_deg};
  const double estimate = initial_beam_estimate(c, o.run.image, o.run.weighting.gaussian_taper_fwhm_rad);
  if (o.beam.fit) return fit_wsclean_beam(c.psf, o.run.image, estimate, o.beam);
  if (o.beam.theoretic) {
    const double deg = estimate * 180 / M_PI;
    return {deg, deg, 0.0};
  }
  return {};
}

}  // namespace gpuclean::app

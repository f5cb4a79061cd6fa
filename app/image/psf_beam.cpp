#include "app/image/psf_beam.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "clean/beam.hpp"
#include "clean/psf.hpp"

namespace gpuclean::app {

double initial_beam_estimate(const imaging::ChannelImage& c, const imaging::ImageGeometry& image,
                             double taper_fwhm_rad) {
  return std::max({c.theoretic_beam_rad, image.scale, taper_fwhm_rad});
}

io::BeamKeywords fit_wsclean_beam(const std::vector<double>& psf, const imaging::ImageGeometry& image,
                                  double initial_rad, const RestoringBeamOptions& beam) {
  if (psf.empty()) return {};
  clean::HostImage h(image.width, image.height);
  for (std::size_t i = 0; i < psf.size(); ++i) h.pixels[i] = static_cast<float>(psf[i]);
  std::string warning;
  const clean::PreparedPsf prepared = clean::prepare_psf(h, image.width, image.height, &warning);
  const double box_scale = beam.fitting_size;  // WSClean's -beam-fitting-size (default 10)
  double estimate = initial_rad / image.scale;
  auto box_for = [box_scale](double beam_px) {
    auto n = static_cast<std::size_t>(std::max(std::ceil(box_scale), std::ceil(beam_px * box_scale)));
    return n % 2 ? n + 1 : n;
  };
  std::size_t preferred = box_for(estimate);
  const double delta_deg = image.scale * 180 / M_PI;
  if (beam.circular) {
    // schaapcommon's circular fit: its box check compares the image with the box (always large
    // enough), so one fit in the first box.
    const std::size_t bw = std::min(preferred, image.width), bh = std::min(preferred, image.height);
    const double fwhm = clean::fit_psf_beam_wsclean_circular(prepared, bw, bh, estimate);
    return {fwhm * delta_deg, fwhm * delta_deg, 0.0};
  }
  clean::PixelGaussian g;
  if (preferred < image.width || preferred < image.height) {
    for (int iteration = 0; iteration < 5; ++iteration) {
      const std::size_t bw = std::min(preferred, image.width), bh = std::min(preferred, image.height);
      g = clean::fit_psf_beam_wsclean_box(prepared, bw, bh, estimate, !beam.with_negatives);
      const double major = g.fwhm_major_pixels();
      const bool large_enough = (major * box_scale * 0.8 < static_cast<double>(bw) || bw >= image.width) &&
                                (major * box_scale * 0.8 < static_cast<double>(bh) || bh >= image.height);
      if (large_enough) break;
      preferred = box_for(major);
      estimate = std::max(major, estimate);
    }
  } else {
    g = clean::fit_psf_beam_wsclean_box(prepared, image.width, image.height, estimate, !beam.with_negatives);
  }
  clean::PixelToSky t;
  t.m[0][0] = -delta_deg, t.m[1][1] = delta_deg;  // CDELT1 = −δ: +x is west
  t.m[0][1] = t.m[1][0] = 0;
  const clean::SkyBeam b = clean::to_sky(g, t);
  return {b.bmaj_arcsec / 3600, b.bmin_arcsec / 3600, b.bpa_deg};
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

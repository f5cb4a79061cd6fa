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
                                  double initial_rad) {
  if (psf.empty()) return {};
  clean::HostImage h(image.width, image.height);
  for (std::size_t i = 0; i < psf.size(); ++i) h.pixels[i] = static_cast<float>(psf[i]);
  std::string warning;
  const clean::PreparedPsf prepared = clean::prepare_psf(h, image.width, image.height, &warning);
  constexpr double kBoxScale = 10;  // WSClean's -beam-fitting-size default
  double estimate = initial_rad / image.scale;
  auto box_for = [](double beam_px) {
    auto n = static_cast<std::size_t>(std::max(std::ceil(kBoxScale), std::ceil(beam_px * kBoxScale)));
    return n % 2 ? n + 1 : n;
  };
  std::size_t preferred = box_for(estimate);
  clean::PixelGaussian g;
  if (preferred < image.width || preferred < image.height) {
    for (int iteration = 0; iteration < 5; ++iteration) {
      const std::size_t bw = std::min(preferred, image.width), bh = std::min(preferred, image.height);
      g = clean::fit_psf_beam_wsclean_box(prepared, bw, bh, estimate);
      const double major = g.fwhm_major_pixels();
      const bool large_enough = (major * kBoxScale * 0.8 < static_cast<double>(bw) || bw >= image.width) &&
                                (major * kBoxScale * 0.8 < static_cast<double>(bh) || bh >= image.height);
      if (large_enough) break;
      preferred = box_for(major);
      estimate = std::max(major, estimate);
    }
  } else {
    g = clean::fit_psf_beam_wsclean_box(prepared, image.width, image.height, estimate);
  }
  clean::PixelToSky t;
  const double delta_deg = image.scale * 180 / M_PI;
  t.m[0][0] = -delta_deg, t.m[1][1] = delta_deg;  // CDELT1 = −δ: +x is west
  t.m[0][1] = t.m[1][0] = 0;
  const clean::SkyBeam b = clean::to_sky(g, t);
  return {b.bmaj_arcsec / 3600, b.bmin_arcsec / 3600, b.bpa_deg};
}

io::BeamKeywords channel_beam(const ImageOptions& o, const imaging::ChannelImage& c) {
  if (const auto& given = o.deconvolution.settings.beam_shape)
    return {given->bmaj_arcsec / 3600, given->bmin_arcsec / 3600, given->bpa_deg};
  return fit_wsclean_beam(c.psf, o.run.image, initial_beam_estimate(c, o.run.image, o.run.weighting.gaussian_taper_fwhm_rad));
}

}  // namespace gpuclean::app

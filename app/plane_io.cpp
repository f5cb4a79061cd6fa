#include "app/plane_io.hpp"

#include <utility>

namespace gpuclean::app {

clean::HostImage to_host(io::FitsImage&& image) {
  clean::HostImage h;
  h.width = image.width;
  h.height = image.height;
  h.pixels = std::move(image.pixels);
  return h;
}

clean::PixelToSky pixel_to_sky(const io::CelestialWcs& wcs) {
  clean::PixelToSky t;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) t.m[i][j] = wcs.m[i][j];
  return t;
}

clean::PreparedPsf prepare_fits_psf(io::FitsImage psf, std::size_t width, std::size_t height, bool unchecked,
                                    std::string* warning) {
  clean::PsfChecks checks;
  checks.strict = !unchecked;
  const auto crpix1 = psf.header.get_double("CRPIX1"), crpix2 = psf.header.get_double("CRPIX2");
  if (crpix1 && crpix2) checks.header_peak = std::make_pair(*crpix1 - 1.0, *crpix2 - 1.0);
  return clean::prepare_psf(to_host(std::move(psf)), width, height, warning, checks);
}

RestoringBeam restoring_beam(const clean::CleanSettings& s, const clean::PreparedPsf& psf,
                             const std::optional<io::CelestialWcs>& wcs) {
  RestoringBeam beam;
  if (s.beam_shape) {
    beam.fitted = false;
    beam.sky = clean::SkyBeam{s.beam_shape->bmaj_arcsec, s.beam_shape->bmin_arcsec, s.beam_shape->bpa_deg};
    beam.pixels = clean::from_sky(*beam.sky, pixel_to_sky(*wcs));
  } else {
    beam.pixels = clean::fit_psf_beam(psf, s.beam_fit);
    if (wcs) beam.sky = clean::to_sky(beam.pixels, pixel_to_sky(*wcs));
  }
  return beam;
}

io::BeamKeywords beam_keywords(const clean::SkyBeam& beam) {
  return {beam.bmaj_arcsec / 3600.0, beam.bmin_arcsec / 3600.0, beam.bpa_deg};
}

}  // namespace gpuclean::app

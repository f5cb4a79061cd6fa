#pragma once
// What the one-image run (pipeline.cpp) and the cube run (cube/) do alike with each plane they
// read and write, between io/ and clean/: the plane as a host image, its PSF prepared against the
// header's peak, the restoring beam in pixels and on the sky, and that beam's header keywords.

#include <cstddef>
#include <optional>
#include <string>

#include "clean/beam.hpp"
#include "clean/clean_settings.hpp"
#include "clean/host_image.hpp"
#include "clean/psf.hpp"
#include "io/fits_image.hpp"
#include "io/fits_writer.hpp"
#include "io/wcs.hpp"

namespace gpuclean::app {

/// The plane's pixels, moved into a host image.
clean::HostImage to_host(io::FitsImage&& image);

/// The WCS's pixel-to-sky matrix, as clean's beam conversions take it.
clean::PixelToSky pixel_to_sky(const io::CelestialWcs& wcs);

/// clean::prepare_psf for a PSF read from FITS, for a width x height image: the header's
/// CRPIX1/CRPIX2 (when it has both) checked as the peak, strictly unless `unchecked`
/// (--psf-unchecked). What would be worth a warning goes to *warning.
clean::PreparedPsf prepare_fits_psf(io::FitsImage psf, std::size_t width, std::size_t height, bool unchecked,
                                    std::string* warning);

/// A plane's restoring beam.
struct RestoringBeam {
  clean::PixelGaussian pixels;
  std::optional<clean::SkyBeam> sky;  ///< none without a celestial WCS
  bool fitted = true;                 ///< fitted to the PSF (false: --beam-shape)
};

/// --beam-shape put into pixels with `wcs` (the caller refuses --beam-shape without one), else
/// the beam fitted to `psf` (settings.beam_fit), on the sky where `wcs` is given.
RestoringBeam restoring_beam(const clean::CleanSettings& settings, const clean::PreparedPsf& psf,
                             const std::optional<io::CelestialWcs>& wcs);

/// BMAJ/BMIN/BPA in degrees, as the outputs' headers carry a beam.
io::BeamKeywords beam_keywords(const clean::SkyBeam& beam);

}  // namespace gpuclean::app

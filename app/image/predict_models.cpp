#include "app/image/predict_models.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

#include "clean/errors.hpp"
#include "io/fits_reader.hpp"

namespace gpuclean::app {
namespace {

using clean::InvalidInput;
constexpr double kDeg = M_PI / 180;
constexpr double kCentreTolerancePixels = 0.01;

std::string format(const char* f, double a, double b = 0) {
  char text[96];
  std::snprintf(text, sizeof text, f, a, b);
  return text;
}

/// Angle between two directions (robust at small separations: the chord of the unit vectors).
double separation(double ra1, double dec1, double ra2, double dec2) {
  const double dx = std::cos(dec1) * std::cos(ra1) - std::cos(dec2) * std::cos(ra2);
  const double dy = std::cos(dec1) * std::sin(ra1) - std::cos(dec2) * std::sin(ra2);
  const double dz = std::sin(dec1) - std::sin(dec2);
  return 2 * std::asin(std::min(1.0, 0.5 * std::sqrt(dx * dx + dy * dy + dz * dz)));
}

/// Checks the size and pixel scale of `f` (read from `path`) against `image` (zero fields: taken
/// from this file, and filled).
void check_geometry(const io::FitsImage& f, const std::string& path, imaging::ImageGeometry& image) {
  const std::string name = "'" + path + "'";
  if (image.width == 0) image.width = f.width, image.height = f.height;
  if (f.width != image.width || f.height != image.height)
    throw InvalidInput(name + " is " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                       " pixels; the run is " + std::to_string(image.width) + "x" + std::to_string(image.height));

  const std::optional<double> cdelt1 = f.header.get_double("CDELT1"), cdelt2 = f.header.get_double("CDELT2");
  if (cdelt1 && cdelt2) {
    const double sx = -*cdelt1 * kDeg, sy = *cdelt2 * kDeg;
    if (image.scale == 0) image.scale = sx;
    // WSClean's rule (W31:main/wsclean.cpp overrideImageSettings): off by at most 0.1 pixel over the image.
    if (std::abs(sx - image.scale) * static_cast<double>(image.width) > 0.1 * image.scale ||
        std::abs(sy - image.scale) * static_cast<double>(image.height) > 0.1 * image.scale)
      throw InvalidInput(name + " has pixels of " + format("%.6g x %.6g", sx / kDeg * 3600, sy / kDeg * 3600) +
                         " asec (-CDELT1, CDELT2); the run's -scale is " +
                         format("%.6g asec", image.scale / kDeg * 3600));
  } else if (image.scale == 0) {
    throw InvalidInput(name + " has no CDELT1/CDELT2 to take the pixel scale from: give -scale");
  }
  if (!(image.scale > 0)) throw InvalidInput(name + " has a pixel scale that is not positive (-CDELT1)");
}

/// Reads `path` and checks it against `image` (zero fields: taken from this file) and the phase
/// centre; returns the pixels and fills `image`.
std::vector<float> load(const std::string& path, imaging::ImageGeometry& image, const io::ms::MsSelection& sel) {
  const io::FitsImage f = io::read_fits_image(path);
  const std::string name = "'" + path + "'";
  check_geometry(f, path, image);

  const double tolerance = kCentreTolerancePixels * image.scale;
  const std::optional<double> ra = f.header.get_double("CRVAL1"), dec = f.header.get_double("CRVAL2");
  if (ra && dec && separation(*ra * kDeg, *dec * kDeg, sel.ra_rad, sel.dec_rad) > tolerance)
    throw InvalidInput(name + " is centred on " + format("RA %.7f, Dec %.7f deg", *ra, *dec) +
                       " (CRVAL1/2), not on the phase centre of '" + sel.path + "', " +
                       format("RA %.7f, Dec %.7f deg", sel.ra_rad / kDeg, sel.dec_rad / kDeg));
  // The gridder puts the phase centre at pixel (W/2, H/2) from 0, FITS's W/2 + 1 (WSClean's CRPIX).
  const double cx = static_cast<double>(image.width / 2 + 1), cy = static_cast<double>(image.height / 2 + 1);
  const std::optional<double> px = f.header.get_double("CRPIX1"), py = f.header.get_double("CRPIX2");
  if ((px && std::abs(*px - cx) > kCentreTolerancePixels) || (py && std::abs(*py - cy) > kCentreTolerancePixels))
    throw InvalidInput(name + " has its reference pixel at " + format("CRPIX1/2 = %g, %g", px.value_or(cx), py.value_or(cy)) +
                       ", not at the image centre " + format("%g, %g", cx, cy));

  std::size_t bad = 0;
  for (float x : f.pixels) bad += !std::isfinite(x);
  if (bad > 0)
    throw InvalidInput(name + " has " + std::to_string(bad) + " non-finite pixel(s): a model must be finite");
  return f.pixels;
}

}  // namespace

std::string model_path(const std::string& name, std::size_t channel, std::size_t channels_out) {
  if (channels_out == 1) return name + "-model.fits";
  char tag[32];
  std::snprintf(tag, sizeof tag, "-%04zu-", channel);
  return name + tag + "model.fits";
}

imaging::ImageGeometry check_model_files(const std::string& name, std::size_t channels_out,
                                         imaging::ImageGeometry image) {
  for (std::size_t c = 0; c < channels_out; ++c) {
    const std::string path = model_path(name, c, channels_out);
    check_geometry(io::read_fits_header(path), path, image);
  }
  return image;
}

imaging::ImageGeometry check_models(const std::string& name, std::size_t channels_out, imaging::ImageGeometry image,
                                    const io::ms::MsSelection& selection) {
  for (std::size_t c = 0; c < channels_out; ++c) load(model_path(name, c, channels_out), image, selection);
  return image;
}

std::vector<double> read_model(const std::string& name, std::size_t channel, std::size_t channels_out,
                               const imaging::ImageGeometry& image, const io::ms::MsSelection& selection) {
  imaging::ImageGeometry g = image;
  const std::vector<float> pixels = load(model_path(name, channel, channels_out), g, selection);
  return std::vector<double>(pixels.begin(), pixels.end());
}

}  // namespace gpuclean::app

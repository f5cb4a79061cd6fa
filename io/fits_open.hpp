#pragma once
// The reader of images and cubes, and the HDU access under it. Private to io/, like fits_file.hpp.

#include <cstddef>
#include <string>

#include "io/fits_cube.hpp"
#include "io/fits_file.hpp"
#include "io/fits_image.hpp"
#include "io/fits_raw.hpp"

namespace gpuclean::io::detail {

/// What read_cube reads besides the shape.
struct CubeParts {
  bool header = true;      ///< the cards (and, for more than one plane, the BEAMS table)
  bool pixels = true;
  /// Refuse more than one plane (the one-image readers). One plane needs no description of its
  /// axes, so they are kept as stored, whatever their types.
  bool one_plane = false;
  /// With pixels: where they go (read_fits_image_into) instead of the cube's vector.
  const PixelBuffer* into = nullptr;
};

/// The one reader of FITS images: a 2-D image (or one with degenerate axes) is a one-plane cube.
FitsCube read_cube(const std::string& path, const CubeParts& parts);

/// A one-plane cube as its image, everything moved: pixels, header and axes as stored.
FitsImage one_plane_image(FitsCube&& cube);

/// Opens `path`, moves to its image HDU (the primary, or the first image extension with data) and
/// fills image.axes/width/height/bitpix; 2 to 4 axes, any lengths. Checks that the file holds
/// the bytes its header announces. The file stays open for the caller.
FitsFilePtr open_image(const std::string& path, FitsImage& image);

/// The data-describing cards of the current HDU (structural cards left out).
FitsHeader read_header(fitsfile* f, const std::string& path);

/// Reads the first `n` pixels of the current HDU (of `naxis` axes) as float, BLANK and NaN as NaN;
/// returns how many those were.
std::size_t read_pixels(fitsfile* f, const std::string& path, std::size_t naxis, float* out, std::size_t n);

}  // namespace gpuclean::io::detail

#pragma once
// What the plane and cube readers share. Private to io/, like fits_file.hpp.

#include <cstddef>
#include <string>

#include "io/fits_file.hpp"
#include "io/fits_image.hpp"

namespace gpuclean::io::detail {

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

#pragma once
#include <string>

#include "io/fits_image.hpp"

namespace gpuclean::io {

/// Reads the image in the primary HDU, or in the first image extension when the primary HDU is
/// empty. BITPIX 8/16/32/64/-32/-64 with BSCALE/BZERO/BLANK; NAXIS 2 to 4 with axes 3 and 4 of
/// length 1: a one-plane cube, read by read_fits_cube's reader, its header and axes as stored.
/// Throws FitsError(kInput) with a message that names the file and the fix.
FitsImage read_fits_image(const std::string& path);

/// The same checks as read_fits_image, and the plane's size (width, height, axes, BITPIX), without
/// reading the header cards or the pixels: what planning needs (batch's automatic streams).
FitsImage read_fits_shape(const std::string& path);

/// read_fits_shape and the header cards, without the pixels: what an output that copies an
/// input's header needs (the MFS images of a channel set take NAME-MFS-dirty.fits's).
FitsImage read_fits_header(const std::string& path);

}  // namespace gpuclean::io

namespace gpuclean::io {

/// True when `path` opens as FITS and holds every byte its headers announce (a file that was cut
/// short is not complete). Never throws. Batch --resume uses it.
bool fits_file_complete(const std::string& path);

}  // namespace gpuclean::io

#pragma once
// Float FITS pixels at the speed of their bytes (issue 37). CFITSIO still opens files and parses
// and writes headers; the pixels of uncompressed, unscaled BITPIX -32/-64 images are moved with
// large pread/pwrite calls and byte-swapped in one vectorisable pass (which also counts NaNs and
// sums the checksum). Everything else (integer BITPIX, BSCALE/BZERO, tile compression, reads of
// pipes) goes through CFITSIO as before. All functions are safe to call from many threads at once.

#include <cstddef>
#include <functional>
#include <string>

#include "io/fits_image.hpp"

namespace gpuclean::io {

/// Where read_fits_image_into puts the pixels: called once, on the reading thread, with the
/// pixel count (width × height) once the header is read and checked; returns a buffer of at least
/// that many floats (e.g. pinned memory from a pool). It may throw; nothing is read then.
using PixelBuffer = std::function<float*(std::size_t pixels)>;

/// read_fits_image, with the pixels written into provide(n)'s buffer instead of a fresh vector:
/// the returned image has empty `pixels`, and its header, axes, bitpix and nan_count as
/// read_fits_image's. The same refusals (FitsError(kInput)), before provide is called.
FitsImage read_fits_image_into(const std::string& path, const PixelBuffer& provide);

/// Off: every read and write goes through CFITSIO with an fsync per file, as before issue 37
/// (`gpuclean bench io --cfitsio` compares the two). On by default. Process-wide.
void set_fits_raw_io(bool on);
bool fits_raw_io();

}  // namespace gpuclean::io

#pragma once
// One image plane read from, or written to, a FITS file.

#include <cstddef>
#include <string>
#include <vector>

#include "io/fits_header.hpp"

namespace gpuclean::io {

/// A single 2-D plane. Pixel (x, y) is pixels[y * width + x]; x runs along FITS axis 1.
/// Missing data (NaN, or BLANK in integer files) is NaN.
struct FitsImage {
  std::size_t width = 0;
  std::size_t height = 0;
  std::vector<float> pixels;
  /// Data-describing cards of the HDU the plane came from.
  FitsHeader header;
  /// Length of every axis as stored, e.g. {256, 256, 1, 1} for WSClean's 4-D images.
  std::vector<long> axes;
  /// BITPIX as stored.
  int bitpix = -32;
  /// Number of NaN/BLANK pixels.
  std::size_t nan_count = 0;
};

}  // namespace gpuclean::io

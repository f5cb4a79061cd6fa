#pragma once
// --quicklook: an 8-bit PNG preview of the restored image, linear between two percentiles of its
// finite pixels (taken by the deconvolver with the selection library's multiselect). North is
// up: FITS row 0 is the bottom row of the PNG. NaN pixels are transparent.

#include <string>

#include "clean/host_image.hpp"
#include "io/png_writer.hpp"

namespace gpuclean::app {

struct QuicklookScale {
  float low = 0.0f, high = 1.0f;                 ///< image values shown black and white
  double low_percent = 0.5, high_percent = 99.5;  ///< the percentiles they came from
};

/// The preview's pixels: grey = 255 (v - low) / (high - low), clamped; alpha 0 for NaN.
io::GreyAlphaImage quicklook_pixels(const clean::HostImage& image, const QuicklookScale& scale);

/// Writes the preview to `path` (atomically; refuses to replace a file unless `overwrite`).
void write_quicklook(const std::string& path, const clean::HostImage& image, const QuicklookScale& scale,
                     const std::string& title, bool overwrite);

}  // namespace gpuclean::app

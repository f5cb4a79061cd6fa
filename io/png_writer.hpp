#pragma once
// PNG encoding through libpng, written atomically like every other output.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpuclean::io {

/// 8-bit grey + alpha pixels, rows top to bottom: {grey, alpha} per pixel.
struct GreyAlphaImage {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  ///< 2 * width * height
};

/// 8-bit RGB pixels, rows top to bottom.
struct RgbImage {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  ///< 3 * width * height
};

/// tEXt chunks, e.g. {"Title", ...}, {"Software", ...}, {"Comment", ...}.
using PngText = std::vector<std::pair<std::string, std::string>>;

std::string encode_png(const GreyAlphaImage& image, const PngText& text);
std::string encode_png(const RgbImage& image, const PngText& text);

/// Decodes any 8-bit PNG into grey + alpha (tests and tools use it to check what was written).
GreyAlphaImage decode_png_grey_alpha(const std::string& path);

}  // namespace gpuclean::io

#include "app/quicklook.hpp"

#include <cmath>
#include <cstdio>

#include "app/version.hpp"
#include "io/text_writer.hpp"

namespace gpuclean::app {

io::GreyAlphaImage quicklook_pixels(const clean::HostImage& image, const QuicklookScale& scale) {
  io::GreyAlphaImage out;
  out.width = image.width;
  out.height = image.height;
  out.pixels.resize(2 * image.size());
  // A flat image (high == low) shows mid-grey rather than dividing by zero.
  const double span = static_cast<double>(scale.high) - static_cast<double>(scale.low);
  for (std::size_t y = 0; y < image.height; ++y) {
    std::uint8_t* row = out.pixels.data() + 2 * (image.height - 1 - y) * image.width;
    for (std::size_t x = 0; x < image.width; ++x) {
      const float v = image.at(x, y);
      std::uint8_t grey = 0, alpha = 255;
      if (std::isnan(v)) {
        alpha = 0;
      } else if (span > 0.0) {
        const double t = (static_cast<double>(v) - scale.low) / span;
        grey = static_cast<std::uint8_t>(std::lround(255.0 * std::fmin(1.0, std::fmax(0.0, t))));
      } else {
        grey = 128;
      }
      row[2 * x] = grey;
      row[2 * x + 1] = alpha;
    }
  }
  return out;
}

void write_quicklook(const std::string& path, const clean::HostImage& image, const QuicklookScale& scale,
                     const std::string& title, bool overwrite) {
  char comment[256];
  std::snprintf(comment, sizeof comment,
                "restored image, linear scale: black %.9g, white %.9g Jy/beam (percentiles %.4g and %.4g of the "
                "finite pixels); north up",
                scale.low, scale.high, scale.low_percent, scale.high_percent);
  const io::PngText text = {{"Title", title}, {"Comment", comment}, {"Software", std::string("gpuclean ") + kVersion}};
  io::write_text_file(path, io::encode_png(quicklook_pixels(image, scale), text), overwrite);
}

}  // namespace gpuclean::app

#include "io/png_writer.hpp"

#include <png.h>

#include <cstdio>
#include <stdexcept>

#include "io/fits_error.hpp"

namespace gpuclean::io {
namespace {

void append(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), length);
}

[[noreturn]] void on_error(png_structp, png_const_charp message) { throw std::runtime_error(message); }
void on_warning(png_structp, png_const_charp) {}

std::string encode(std::size_t width, std::size_t height, int color_type, int channels,
                   const std::vector<std::uint8_t>& pixels, const PngText& text) {
  if (width == 0 || height == 0 || pixels.size() != width * height * channels)
    throw std::invalid_argument("encode_png: pixel count does not match the size");
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    throw std::bad_alloc();
  }
  try {
    png_set_write_fn(png, &out, append, nullptr);
    png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, color_type,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    std::vector<png_text> chunks(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      chunks[i].compression = PNG_TEXT_COMPRESSION_NONE;
      chunks[i].key = const_cast<char*>(text[i].first.c_str());
      chunks[i].text = const_cast<char*>(text[i].second.c_str());
    }
    if (!chunks.empty()) png_set_text(png, info, chunks.data(), static_cast<int>(chunks.size()));
    png_write_info(png, info);
    for (std::size_t y = 0; y < height; ++y)
      png_write_row(png, const_cast<png_bytep>(pixels.data() + y * width * channels));
    png_write_end(png, nullptr);
  } catch (...) {
    png_destroy_write_struct(&png, &info);
    throw;
  }
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace

std::string encode_png(const GreyAlphaImage& image, const PngText& text) {
  return encode(image.width, image.height, PNG_COLOR_TYPE_GRAY_ALPHA, 2, image.pixels, text);
}

std::string encode_png(const RgbImage& image, const PngText& text) {
  return encode(image.width, image.height, PNG_COLOR_TYPE_RGB, 3, image.pixels, text);
}

GreyAlphaImage decode_png_grey_alpha(const std::string& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path.c_str()))
    throw FitsError(FitsError::Kind::kInput, "'" + path + "' is not a readable PNG: " + img.message);
  img.format = PNG_FORMAT_GA;
  GreyAlphaImage out;
  out.width = img.width;
  out.height = img.height;
  out.pixels.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.pixels.data(), 0, nullptr)) {
    const std::string why = img.message;
    png_image_free(&img);
    throw FitsError(FitsError::Kind::kInput, "cannot decode '" + path + "': " + why);
  }
  return out;
}

}  // namespace gpuclean::io

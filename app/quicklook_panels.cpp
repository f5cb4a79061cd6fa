#include "app/quicklook_panels.hpp"

#include <gd.h>
#include <gdfontl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "app/version.hpp"
#include "clean/errors.hpp"
#include "clean/quantiles.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "io/text_writer.hpp"
#include "select/cpu_reference.hpp"

namespace gpuclean::app {
namespace {

constexpr std::size_t kGap = 4, kTitlePad = 3;
constexpr std::uint8_t kWhite = 255, kBlack = 0, kOpaque = 255;

struct GdDeleter {
  void operator()(gdImage* im) const { gdImageDestroy(im); }
};

// `text` in libgd's built-in 8 x 16 font as a bitmap (true: ink), cut to `max_width` pixels.
std::vector<std::vector<bool>> render_text(const std::string& text, std::size_t max_width) {
  const gdFontPtr font = gdFontGetLarge();
  const std::size_t glyph_w = static_cast<std::size_t>(font->w), glyph_h = static_cast<std::size_t>(font->h);
  const std::string shown = text.substr(0, std::min(text.size(), max_width / glyph_w));
  std::vector<std::vector<bool>> ink(glyph_h, std::vector<bool>(shown.size() * glyph_w, false));
  if (shown.empty()) return ink;
  std::unique_ptr<gdImage, GdDeleter> im(gdImageCreate(static_cast<int>(shown.size() * glyph_w), font->h));
  if (!im) throw std::bad_alloc();
  const int paper = gdImageColorAllocate(im.get(), 255, 255, 255), pen = gdImageColorAllocate(im.get(), 0, 0, 0);
  gdImageString(im.get(), font, 0, 0, reinterpret_cast<unsigned char*>(const_cast<char*>(shown.c_str())), pen);
  for (std::size_t y = 0; y < glyph_h; ++y)
    for (std::size_t x = 0; x < ink[y].size(); ++x)
      ink[y][x] = gdImageGetPixel(im.get(), static_cast<int>(x), static_cast<int>(y)) != paper;
  return ink;
}

std::string size_text(std::size_t w, std::size_t h) { return std::to_string(w) + "x" + std::to_string(h); }

}  // namespace

PanelLayout panel_layout(std::size_t width, std::size_t height, std::size_t count, bool titles) {
  PanelLayout l;
  l.panel_width = width;
  l.panel_height = height;
  l.text_scale = std::clamp<std::size_t>(std::min(width, height) / 512, 1, 8);
  l.gap = kGap * l.text_scale;
  l.title_height = titles ? (static_cast<std::size_t>(gdFontGetLarge()->h) + 2 * kTitlePad) * l.text_scale : 0;
  l.width = count * width + (count > 0 ? count - 1 : 0) * l.gap;
  l.height = height + l.title_height;
  return l;
}

QuicklookScale panel_scale(const clean::HostImage& first, const QuicklookPanelsOptions& o,
                           const std::string& first_name) {
  if (o.range) {
    return {static_cast<float>(o.range->first), static_cast<float>(o.range->second), -1.0, -1.0};
  }
  std::vector<float> finite;
  finite.reserve(first.size());
  for (float v : first.pixels)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty()) {
    throw clean::InvalidInput("'" + first_name +
                              "' has no finite pixel to take the stretch from; give --range MIN MAX, or put an "
                              "image with data first.");
  }
  const auto ranks = clean::quantile_ranks({o.low_percent / 100.0, o.high_percent / 100.0}, finite.size());
  const std::vector<float> v = select::multiselect_cpu(finite, ranks);
  return {v[0], v[1], o.low_percent, o.high_percent};
}

io::GreyAlphaImage compose_panels(const std::vector<clean::HostImage>& images, const QuicklookScale& scale,
                                  const std::vector<std::string>& titles) {
  if (images.empty()) throw std::invalid_argument("compose_panels: no image");
  const std::size_t w = images[0].width, h = images[0].height;
  const PanelLayout l = panel_layout(w, h, images.size(), !titles.empty());
  io::GreyAlphaImage out;
  out.width = l.width;
  out.height = l.height;
  out.pixels.resize(2 * l.width * l.height);
  for (std::size_t i = 0; i < out.pixels.size(); i += 2) out.pixels[i] = kWhite, out.pixels[i + 1] = kOpaque;
  for (std::size_t i = 0; i < images.size(); ++i) {
    if (images[i].width != w || images[i].height != h)
      throw std::invalid_argument("compose_panels: the images differ in size");
    const io::GreyAlphaImage panel = quicklook_pixels(images[i], scale);
    for (std::size_t y = 0; y < h; ++y)
      std::copy_n(panel.pixels.data() + 2 * y * w, 2 * w,
                  out.pixels.data() + 2 * ((l.title_height + y) * l.width + l.panel_x(i)));
  }
  const std::size_t s = l.text_scale;
  for (std::size_t i = 0; i < titles.size() && i < images.size(); ++i) {
    const auto ink = render_text(titles[i], w / s);
    const std::size_t text_w = ink.empty() ? 0 : ink[0].size() * s;
    const std::size_t x0 = l.panel_x(i) + (w - text_w) / 2, y0 = kTitlePad * s;
    for (std::size_t y = 0; y < ink.size() * s; ++y)
      for (std::size_t x = 0; x < text_w; ++x)
        if (ink[y / s][x / s]) out.pixels[2 * ((y0 + y) * l.width + x0 + x)] = kBlack;
  }
  return out;
}

int run_quicklook_panels(const QuicklookPanelsOptions& o, const std::string& command_line) {
  // Settings and the output first: nothing is read before they are known to be right.
  if (o.inputs.empty()) throw clean::InvalidSettings("give the FITS images to show: gpuclean quicklook A.fits B.fits -o panels.png");
  if (o.range) {
    if (!(std::isfinite(o.range->first) && std::isfinite(o.range->second) && o.range->first < o.range->second))
      throw clean::InvalidSettings("--range MIN MAX needs finite MIN < MAX (image units).");
  } else if (!(o.low_percent >= 0.0 && o.low_percent < o.high_percent && o.high_percent <= 100.0)) {
    throw clean::InvalidSettings("--percentiles LO HI must satisfy 0 <= LO < HI <= 100 (percent).");
  }
  if (!o.titles.empty() && o.titles.size() != o.inputs.size()) {
    throw clean::InvalidSettings("--titles has " + std::to_string(o.titles.size()) +
                                 (o.titles.size() == 1 ? " title for " : " titles for ") +
                                 std::to_string(o.inputs.size()) + " images; give one per image, separated by commas.");
  }
  io::WriteOptions check;
  check.overwrite = o.overwrite;
  check.inputs = o.inputs;
  io::check_output_path(o.output, check);

  // Sizes from the headers before any pixels are read.
  std::vector<io::FitsImage> shapes;
  for (const auto& path : o.inputs) shapes.push_back(io::read_fits_shape(path));
  for (std::size_t i = 1; i < shapes.size(); ++i) {
    if (shapes[i].width != shapes[0].width || shapes[i].height != shapes[0].height) {
      std::string sizes;
      for (std::size_t j = 0; j < shapes.size(); ++j)
        sizes += (j ? ", '" : "'") + o.inputs[j] + "' is " + size_text(shapes[j].width, shapes[j].height);
      throw clean::InvalidInput("quicklook shows images of one size side by side, but " + sizes +
                                "; give images of one size.");
    }
  }

  std::vector<clean::HostImage> images;
  for (const auto& path : o.inputs) {
    io::FitsImage f = io::read_fits_image(path);
    clean::HostImage h;
    h.width = f.width;
    h.height = f.height;
    h.pixels = std::move(f.pixels);
    images.push_back(std::move(h));
  }
  const QuicklookScale scale = panel_scale(images[0], o, o.inputs[0]);

  std::string names, stretch;
  for (std::size_t i = 0; i < o.inputs.size(); ++i) {
    names += (i ? ", " : "") + o.inputs[i];
    if (!o.titles.empty()) names += " (" + o.titles[i] + ")";
  }
  char buf[256];
  if (o.range) {
    std::snprintf(buf, sizeof buf, "linear: black %.9g, white %.9g (--range)", scale.low, scale.high);
  } else {
    std::snprintf(buf, sizeof buf, "linear: black %.9g, white %.9g (percentiles %.4g and %.4g of the first image's finite pixels)",
                  scale.low, scale.high, scale.low_percent, scale.high_percent);
  }
  stretch = buf;
  const io::PngText text = {{"Title", "panels, left to right: " + names},
                            {"Comment", "one stretch for every panel, " + stretch + "; north up; NaN transparent"},
                            {"Software", std::string("gpuclean ") + kVersion + ": " + command_line}};
  const io::GreyAlphaImage png = compose_panels(images, scale, o.titles);
  io::write_text_file(o.output, io::encode_png(png, text), o.overwrite);
  std::printf("quicklook: %zu panels of %s -> %s (%zux%zu), %s\n", images.size(),
              size_text(images[0].width, images[0].height).c_str(), o.output.c_str(), png.width, png.height,
              stretch.c_str());
  return 0;
}

}  // namespace gpuclean::app

#include "app/compare/select_chart.hpp"

#include <gd.h>
#include <gdfontl.h>
#include <gdfonts.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "io/text_writer.hpp"

namespace gpuclean::app {
namespace {

constexpr int kWidth = 960, kHeight = 540;
constexpr int kLeft = 80, kRight = 250, kTop = 46, kBottom = 56;

struct ImageDeleter {
  void operator()(gdImage* im) const { gdImageDestroy(im); }
};

void text(gdImagePtr im, gdFontPtr font, int x, int y, const std::string& s, int color) {
  gdImageString(im, font, x, y, reinterpret_cast<unsigned char*>(const_cast<char*>(s.c_str())), color);
}

std::string format_ms(double ms) {
  char buf[32];
  // Whole milliseconds from 1 ms up; below, enough decimals to show the first significant digit.
  const int decimals = ms >= 1.0 || !(ms > 0.0) ? 0 : static_cast<int>(-std::floor(std::log10(ms)));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, ms);
  return buf;
}

}  // namespace

std::string select_chart_png(const SelectComparisonTable& table, const std::string& title) {
  std::unique_ptr<gdImage, ImageDeleter> holder(gdImageCreateTrueColor(kWidth, kHeight));
  if (!holder) throw std::bad_alloc();
  gdImagePtr im = holder.get();
  const int white = gdTrueColor(255, 255, 255), black = gdTrueColor(0, 0, 0), grid = gdTrueColor(225, 225, 225);
  const int palette[] = {gdTrueColor(0, 0, 0),      gdTrueColor(31, 119, 180), gdTrueColor(214, 39, 40),
                         gdTrueColor(44, 160, 44),  gdTrueColor(255, 127, 14), gdTrueColor(148, 103, 189),
                         gdTrueColor(140, 86, 75),  gdTrueColor(227, 119, 194)};
  gdImageFilledRectangle(im, 0, 0, kWidth - 1, kHeight - 1, white);

  const std::size_t cycles = table.cycles().size(), backends = table.backends().size();
  double lo = INFINITY, hi = 0.0;
  for (std::size_t i = 0; i < cycles; ++i)
    for (std::size_t b = 0; b < backends; ++b) {
      const double ms = table.seconds(i, b) * 1e3;
      if (ms > 0.0) lo = std::min(lo, ms), hi = std::max(hi, ms);
    }
  if (!(hi > 0.0)) lo = 0.01, hi = 1.0;
  const double dlo = std::floor(std::log10(lo)), dhi = std::max(dlo + 1.0, std::ceil(std::log10(hi)));
  const int x0 = kLeft, x1 = kWidth - kRight, y0 = kHeight - kBottom, y1 = kTop;
  const double c0 = cycles > 1 ? 1.0 : 0.5, c1 = cycles > 1 ? static_cast<double>(cycles) : 1.5;
  auto px = [&](double cycle) { return x0 + static_cast<int>(std::lround((cycle - c0) / (c1 - c0) * (x1 - x0))); };
  auto py = [&](double ms) {
    return y0 - static_cast<int>(std::lround((std::log10(ms) - dlo) / (dhi - dlo) * (y0 - y1)));
  };

  // Decades with labels, minor ticks between.
  for (double d = dlo; d <= dhi + 1e-9; d += 1.0) {
    const double ms = std::pow(10.0, d);
    gdImageLine(im, x0, py(ms), x1, py(ms), grid);
    const std::string label = format_ms(ms);
    text(im, gdFontGetSmall(), x0 - 8 - 6 * static_cast<int>(label.size()), py(ms) - 6, label, black);
    for (int m = 2; m < 10 && d < dhi; ++m) gdImageLine(im, x0 - 3, py(ms * m), x0, py(ms * m), black);
  }
  const std::size_t step = std::max<std::size_t>(1, cycles / 12);
  for (std::size_t c = 1; c <= cycles; c += step) {
    gdImageLine(im, px(static_cast<double>(c)), y0, px(static_cast<double>(c)), y0 + 4, black);
    const std::string label = std::to_string(c);
    text(im, gdFontGetSmall(), px(static_cast<double>(c)) - 3 * static_cast<int>(label.size()), y0 + 7, label, black);
  }
  gdImageRectangle(im, x0, y1, x1, y0, black);
  text(im, gdFontGetSmall(), (x0 + x1) / 2 - 33, y0 + 24, "major cycle", black);
  gdImageStringUp(im, gdFontGetSmall(), 14, (y0 + y1) / 2 + 60,
                  reinterpret_cast<unsigned char*>(const_cast<char*>("time per top-k [ms]")), black);
  text(im, gdFontGetLarge(), x0, 14, "Selection time per major cycle: " + title, black);

  gdImageSetThickness(im, 2);
  for (std::size_t b = 0; b < backends; ++b) {
    const int color = palette[b % (sizeof palette / sizeof palette[0])];
    int last_x = -1, last_y = -1;
    for (std::size_t i = 0; i < cycles; ++i) {
      const double ms = table.seconds(i, b) * 1e3;
      if (!(ms > 0.0)) {
        last_x = -1;
        continue;
      }
      const int x = px(static_cast<double>(i + 1)), y = py(ms);
      if (last_x >= 0) gdImageLine(im, last_x, last_y, x, y, color);
      gdImageFilledRectangle(im, x - 2, y - 2, x + 2, y + 2, color);
      last_x = x, last_y = y;
    }
    // Legend: name, total time, speed-up over sort.
    const int ly = y1 + 8 + static_cast<int>(b) * 34;
    gdImageLine(im, x1 + 14, ly + 6, x1 + 34, ly + 6, color);
    text(im, gdFontGetSmall(), x1 + 40, ly, table.backends()[b], black);
    char line[96];
    const double speedup = table.speedup_over_sort(b);
    std::snprintf(line, sizeof line, "%.3f ms total, %.2fx sort", table.total_seconds(b) * 1e3, speedup);
    text(im, gdFontGetSmall(), x1 + 40, ly + 13, line, black);
  }
  gdImageSetThickness(im, 1);

  int size = 0;
  void* bytes = gdImagePngPtr(im, &size);
  if (!bytes) throw std::runtime_error("libgd could not encode the selection chart as PNG");
  std::string out(static_cast<const char*>(bytes), static_cast<std::size_t>(size));
  gdFree(bytes);
  return out;
}

void write_select_chart(const std::string& path, const SelectComparisonTable& table, const std::string& title,
                        bool overwrite) {
  io::write_text_file(path, select_chart_png(table, title), overwrite);
}

}  // namespace gpuclean::app

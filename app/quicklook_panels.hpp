#pragma once
// `gpuclean quicklook A.fits B.fits ... -o panels.png`: the images side by side in one 8-bit PNG,
// all under ONE linear stretch (so a value shows the same grey in every panel), north up, NaN
// transparent, as --quicklook draws a single image (app/quicklook.hpp). Panels are placed left to
// right in the order given, `gap` white pixels apart; with titles, a white strip above them holds
// each panel's title in libgd's built-in font (no font files).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/quicklook.hpp"
#include "clean/host_image.hpp"
#include "io/png_writer.hpp"

namespace gpuclean::app {

struct QuicklookPanelsOptions {
  std::vector<std::string> inputs;                   ///< FITS images, one panel each, left to right
  std::string output;                                ///< the PNG
  double low_percent = 0.5, high_percent = 99.5;     ///< of the first image's finite pixels
  std::optional<std::pair<double, double>> range;    ///< fixed black and white, image units
  std::vector<std::string> titles;                   ///< none, or one per input
  bool overwrite = false;
};

/// Where the panels go in the composite PNG (pixels; rows from the top).
struct PanelLayout {
  std::size_t panel_width = 0, panel_height = 0;
  std::size_t gap = 0;           ///< white columns between two panels
  std::size_t title_height = 0;  ///< white rows above the panels (0 without titles)
  std::size_t text_scale = 1;    ///< the title font's pixels are this many PNG pixels wide and high
  std::size_t width = 0, height = 0;
  std::size_t panel_x(std::size_t i) const { return i * (panel_width + gap); }
};

/// The layout for `count` panels of width x height: a gap of 4 pixels (and a title font of
/// libgd's 8 x 16 glyphs) for panels up to 1023 pixels across, scaled by min(width, height) / 512
/// (up to 8) above, so that a 2048^2 figure viewed shrunk still shows them.
PanelLayout panel_layout(std::size_t width, std::size_t height, std::size_t count, bool titles);

/// The common stretch: `range` when given; otherwise the first image's `low_percent` and
/// `high_percent` percentiles of its finite pixels (nearest rank, as --quicklook takes them).
/// Throws clean::InvalidInput when the first image has no finite pixel.
QuicklookScale panel_scale(const clean::HostImage& first, const QuicklookPanelsOptions& options,
                           const std::string& first_name);

/// The composite: each image through quicklook_pixels() with `scale`, placed by `panel_layout`;
/// gaps and the title strip opaque white, titles black (cut to the panel's width). Every image must
/// have the first one's size.
io::GreyAlphaImage compose_panels(const std::vector<clean::HostImage>& images, const QuicklookScale& scale,
                                  const std::vector<std::string>& titles);

/// The subcommand: checks the settings and the output (never an input; an existing file only with
/// `overwrite`) before reading anything, then the images' sizes (one line naming the files and
/// sizes when they differ: clean::InvalidInput, exit code 3), then writes the PNG atomically.
/// Prints one line: panels, size, stretch. Returns the exit code (0).
int run_quicklook_panels(const QuicklookPanelsOptions& options, const std::string& command_line);

}  // namespace gpuclean::app

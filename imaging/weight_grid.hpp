#pragma once
// WSClean's uv weight grid (W31:structures/imageweights.{h,cpp}): the v >= 0 half-plane of the
// PADDED image's uv plane, one cell per uv pixel, accumulated in double. Samples with v < 0 are
// mirrored; a sample outside the grid is neither accumulated nor counted in the total.

#include <cstddef>
#include <vector>

namespace gpuclean::imaging {

/// WSClean's padded size (W31:main/settings.cpp RecalculatePaddedDimensions): ceil(n·padding),
/// rounded up to a multiple of 4.
std::size_t padded_size(std::size_t n, double padding);

/// c / ν as WSClean computes it (aocommon::BandData::ChannelWavelength, in long double), so that
/// the cell of a sample on a cell edge is the same as WSClean's.
double wavelength_m(double freq_hz);

class WeightGrid {
 public:
  /// A grid for a padded image of `padded_width` × `padded_height` pixels of `scale_x`, `scale_y`
  /// radians. Odd sizes are made even, as WSClean does; the grid is width × height/2 cells.
  WeightGrid(std::size_t padded_width, std::size_t padded_height, double scale_x, double scale_y);

  std::size_t width() const { return width_; }
  std::size_t rows() const { return height_ / 2; }  ///< cells along v (v >= 0 only)
  std::size_t height() const { return height_; }

  /// The cell of (u, v) in wavelengths; false when it lies outside the grid.
  bool cell(double u, double v, std::size_t& x, std::size_t& y) const;
  /// The uv coordinates (wavelengths) of a cell's corner, as WSClean's xyToUV.
  void cell_uv(std::size_t x, std::size_t y, double& u, double& v) const;

  /// Adds a visibility weight at (u, v) in wavelengths.
  void add(double u, double v, double weight);
  /// Σ of the weights added inside the grid.
  double total() const { return total_; }

  /// The cell value at (u, v), 0 outside the grid (WSClean's GetWeight).
  double lookup(double u, double v) const;

  std::vector<double>& cells() { return cells_; }  ///< [y * width + x]
  const std::vector<double>& cells() const { return cells_; }

 private:
  std::size_t width_, height_;
  double scale_x_, scale_y_;
  std::vector<double> cells_;
  double total_ = 0;
};

}  // namespace gpuclean::imaging

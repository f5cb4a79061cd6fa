#include "imaging/weight_grid.hpp"

#include <cmath>

namespace gpuclean::imaging {

std::size_t padded_size(std::size_t n, double padding) {
  auto p = static_cast<std::size_t>(std::ceil(static_cast<double>(n) * padding));
  return p + (4 - p % 4) % 4;
}

double wavelength_m(double freq_hz) { return static_cast<double>(299792458.0L / freq_hz); }

WeightGrid::WeightGrid(std::size_t padded_width, std::size_t padded_height, double scale_x, double scale_y)
    : width_(padded_width + padded_width % 2),
      height_(padded_height + padded_height % 2),
      scale_x_(scale_x),
      scale_y_(scale_y),
      cells_(width_ * (height_ / 2), 0.0) {}

// The same operations in the same order as WSClean's uvToXY, so edge samples fall alike.
bool WeightGrid::cell(double u, double v, std::size_t& x, std::size_t& y) const {
  if (v < 0.0) u = -u, v = -v;
  const double fx = std::floor(u * static_cast<double>(width_) * scale_x_ + static_cast<double>(width_ / 2));
  const double fy = std::floor(v * static_cast<double>(height_) * scale_y_);
  if (!(fx >= 0 && fx < static_cast<double>(width_) && fy < static_cast<double>(height_ / 2))) return false;
  x = static_cast<std::size_t>(fx), y = static_cast<std::size_t>(fy);
  return true;
}

void WeightGrid::cell_uv(std::size_t x, std::size_t y, double& u, double& v) const {
  u = static_cast<double>(static_cast<long>(x) - static_cast<long>(width_ / 2)) /
      (static_cast<double>(width_) * scale_x_);
  v = static_cast<double>(y) / (static_cast<double>(height_) * scale_y_);
}

void WeightGrid::add(double u, double v, double weight) {
  std::size_t x = 0, y = 0;
  if (!cell(u, v, x, y)) return;
  cells_[y * width_ + x] += weight;
  total_ += weight;
}

double WeightGrid::lookup(double u, double v) const {
  std::size_t x = 0, y = 0;
  return cell(u, v, x, y) ? cells_[y * width_ + x] : 0.0;
}

}  // namespace gpuclean::imaging

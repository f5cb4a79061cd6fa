#include "imaging/weight_tapers.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuclean::imaging {

void rank_filter(WeightGrid& grid, double level, std::size_t window) {
  const std::size_t nx = grid.width(), ny = grid.rows(), d = window / 2;
  const std::vector<double>& in = grid.cells();
  // sum[(y)(nx+1) + x]: Σ of cells [0, y) × [0, x); count likewise for nonzero cells.
  std::vector<double> sum((nx + 1) * (ny + 1), 0.0);
  std::vector<std::size_t> count((nx + 1) * (ny + 1), 0);
  for (std::size_t y = 0; y < ny; ++y) {
    double row_sum = 0;
    std::size_t row_count = 0;
    for (std::size_t x = 0; x < nx; ++x) {
      const double w = in[y * nx + x];
      if (w != 0.0) row_sum += w, ++row_count;
      sum[(y + 1) * (nx + 1) + x + 1] = sum[y * (nx + 1) + x + 1] + row_sum;
      count[(y + 1) * (nx + 1) + x + 1] = count[y * (nx + 1) + x + 1] + row_count;
    }
  }
  std::vector<double> out(in);
  for (std::size_t y = 0; y < ny; ++y) {
    const std::size_t y1 = y <= d ? 0 : y - d, y2 = std::min(y + d, ny);
    for (std::size_t x = 0; x < nx; ++x) {
      const double w = in[y * nx + x];
      if (w == 0.0) continue;
      const std::size_t x1 = x <= d ? 0 : x - d, x2 = std::min(x + d, nx);
      const auto at = [&](const auto& a, std::size_t yy, std::size_t xx) { return a[yy * (nx + 1) + xx]; };
      const std::size_t n = at(count, y2, x2) - at(count, y1, x2) - at(count, y2, x1) + at(count, y1, x1);
      if (n == 0) continue;  // an empty window (window < 2): WSClean's mean is NaN and nothing changes
      const double s = at(sum, y2, x2) - at(sum, y1, x2) - at(sum, y2, x1) + at(sum, y1, x1);
      const double mean = s / static_cast<double>(n);
      if (w > mean * level) out[y * nx + x] = mean * level;
    }
  }
  grid.cells() = std::move(out);
}

void gaussian_taper(WeightGrid& grid, double fwhm_rad) {
  // The same expression as WSClean's, long double factor included, so cells agree to rounding.
  const double half_power_uv = 1.0 / (fwhm_rad * 2.0 * M_PI);
  const long double sigma_to_hp = 2.0L * sqrtl(2.0L * logl(2.0L));
  double minus_two_sigma_sq = static_cast<double>(half_power_uv * sigma_to_hp);
  minus_two_sigma_sq *= -2.0 * minus_two_sigma_sq;
  std::vector<double>& cells = grid.cells();
  for (std::size_t y = 0; y < grid.rows(); ++y)
    for (std::size_t x = 0; x < grid.width(); ++x) {
      double& c = cells[y * grid.width() + x];
      if (c == 0.0) continue;
      double u = 0, v = 0;
      grid.cell_uv(x, y, u, v);
      c *= std::exp((u * u + v * v) / minus_two_sigma_sq);
    }
}

}  // namespace gpuclean::imaging

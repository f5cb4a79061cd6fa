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

namespace gpuclean::imaging {
namespace {

// WSClean's tukeyFrom0ToN: 0 at x = 0, 1 at x = n.
double tukey(double x, double n) { return 0.5 * (1.0 + std::cos((M_PI / n) * (x - n))); }

/// Calls f(cell, u, v) for every cell of the half plane.
template <class F>
void for_each_cell(WeightGrid& grid, F f) {
  std::vector<double>& cells = grid.cells();
  for (std::size_t y = 0; y < grid.rows(); ++y)
    for (std::size_t x = 0; x < grid.width(); ++x) {
      double u = 0, v = 0;
      grid.cell_uv(x, y, u, v);
      f(cells[y * grid.width() + x], u, v);
    }
}

}  // namespace

void min_uv_range(WeightGrid& grid, double min_lambda) {
  const double min_sq = min_lambda * min_lambda;
  for_each_cell(grid, [&](double& c, double u, double v) {
    if (u * u + v * v < min_sq) c = 0.0;
  });
}

void max_uv_range(WeightGrid& grid, double max_lambda) {
  const double max_sq = max_lambda * max_lambda;
  for_each_cell(grid, [&](double& c, double u, double v) {
    if (u * u + v * v > max_sq) c = 0.0;
  });
}

void inner_tukey_taper(WeightGrid& grid, double transition_lambda, double min_lambda) {
  const double min_sq = min_lambda * min_lambda;
  const double total_sq = (min_lambda + transition_lambda) * (min_lambda + transition_lambda);
  for_each_cell(grid, [&](double& c, double u, double v) {
    const double d_sq = u * u + v * v;
    if (d_sq < min_sq) c = 0.0;
    else if (d_sq < total_sq) c *= tukey(std::sqrt(d_sq) - min_lambda, transition_lambda);
  });
}

void tukey_taper(WeightGrid& grid, double transition_lambda, double max_lambda) {
  const double max_sq = max_lambda * max_lambda;
  const double start_sq = (max_lambda - transition_lambda) * (max_lambda - transition_lambda);
  for_each_cell(grid, [&](double& c, double u, double v) {
    const double d_sq = u * u + v * v;
    if (d_sq > max_sq) c = 0.0;
    else if (d_sq > start_sq) c *= tukey(max_lambda - std::sqrt(d_sq), transition_lambda);
  });
}

void edge_taper(WeightGrid& grid, double size_lambda) {
  double max_u = 0, max_v = 0;
  grid.cell_uv(grid.width(), grid.rows(), max_u, max_v);
  for_each_cell(grid, [&](double& c, double u, double v) {
    if (max_u - std::fabs(u) < size_lambda || max_v - std::fabs(v) < size_lambda) c = 0.0;
  });
}

void edge_tukey_taper(WeightGrid& grid, double transition_lambda, double edge_lambda) {
  double max_u = 0, max_v = 0;
  grid.cell_uv(grid.width(), grid.rows(), max_u, max_v);
  const double total = transition_lambda + edge_lambda;
  for_each_cell(grid, [&](double& c, double u, double v) {
    const double du = max_u - std::fabs(u), dv = max_v - std::fabs(v);
    if (du < edge_lambda || dv < edge_lambda) {
      c = 0.0;
    } else if (du < total || dv < total) {
      const double ru = std::min(du - edge_lambda, transition_lambda), rv = std::min(dv - edge_lambda, transition_lambda);
      c *= tukey(ru, transition_lambda) * tukey(rv, transition_lambda);
    }
  });
}

}  // namespace gpuclean::imaging

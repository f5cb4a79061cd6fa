#include "beam/beam_image.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace gpuclean::beam {

void radec_to_lm(RaDec direction, RaDec centre, double& l, double& m) {
  const double d_ra = direction.ra - centre.ra;
  const double cos_dec = std::cos(direction.dec);
  l = cos_dec * std::sin(d_ra);
  m = std::sin(direction.dec) * std::cos(centre.dec) - cos_dec * std::sin(centre.dec) * std::cos(d_ra);
}

RaDec lm_to_radec(double l, double m, RaDec centre) {
  const double n = std::sqrt(std::max(0.0, 1.0 - l * l - m * m));
  const double cos_dec0 = std::cos(centre.dec), sin_dec0 = std::sin(centre.dec);
  RaDec d;
  d.ra = centre.ra + std::atan2(l, n * cos_dec0 - m * sin_dec0);
  d.dec = std::asin(std::clamp(m * cos_dec0 + n * sin_dec0, -1.0, 1.0));
  return d;
}

namespace {

struct Vec3 {
  double x, y, z;
};

Vec3 unit(RaDec d) { return {std::cos(d.dec) * std::cos(d.ra), std::cos(d.dec) * std::sin(d.ra), std::sin(d.dec)}; }

/// atan2(|a × b|, a · b): the angle between two vectors, accurate near 0 and π.
double angle_between(const Vec3& a, const Vec3& b) {
  const Vec3 c{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
  return std::atan2(std::sqrt(c.x * c.x + c.y * c.y + c.z * c.z), a.x * b.x + a.y * b.y + a.z * b.z);
}

/// Runs row_fn(y) for every row, over `threads` threads (0: all hardware threads).
template <typename RowFn>
void for_rows(std::size_t height, unsigned threads, RowFn row_fn) {
  unsigned n = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads;
  n = static_cast<unsigned>(std::min<std::size_t>(n, std::max<std::size_t>(height, 1)));
  if (n <= 1) {
    for (std::size_t y = 0; y != height; ++y) row_fn(y);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(n);
  for (unsigned t = 0; t != n; ++t) {
    workers.emplace_back([&, t] {
      for (std::size_t y = t; y < height; y += n) row_fn(y);
    });
  }
  for (std::thread& w : workers) w.join();
}

/// The radius each pixel's beam is evaluated at (see BeamImageOptions), NaN without a direction.
/// Calls fn(index, radius) for every pixel.
template <typename Fn>
void for_each_radius(const ImageGrid& grid, RaDec pointing, const BeamImageOptions& options, Fn fn) {
  double l0 = 0, m0 = 0;
  radec_to_lm(pointing, grid.phase_centre, l0, m0);
  // The pointing in the (l, m, n) frame of the phase centre, for the exact distance.
  const double n0 = std::sin(pointing.dec) * std::sin(grid.phase_centre.dec) +
                    std::cos(pointing.dec) * std::cos(grid.phase_centre.dec) * std::cos(pointing.ra - grid.phase_centre.ra);
  const Vec3 p{l0, m0, n0};
  for_rows(grid.height, options.threads, [&](std::size_t y) {
    for (std::size_t x = 0; x != grid.width; ++x) {
      const std::size_t index = y * grid.width + x;
      double l, m;
      pixel_lm(grid, static_cast<double>(x), static_cast<double>(y), l, m);
      double radius;
      if (options.everybeam_geometry) {
        // EveryBeam VoltagePattern::Render with no image shift.
        const double ls = l + l0, ms = m + m0;
        if (ls * ls + ms * ms > 1.0) {
          fn(index, std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        double lp, mp;
        radec_to_lm(lm_to_radec(ls, ms, grid.phase_centre), pointing, lp, mp);
        lp -= l0;
        mp -= m0;
        radius = std::sqrt(lp * lp + mp * mp);
      } else {
        const double r2 = l * l + m * m;
        if (r2 > 1.0) {
          fn(index, std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        radius = angle_between(p, Vec3{l, m, std::sqrt(1.0 - r2)});
      }
      fn(index, radius);
    }
  });
}

}  // namespace

double angular_distance(RaDec a, RaDec b) { return angle_between(unit(a), unit(b)); }

void pixel_lm(const ImageGrid& grid, double x, double y, double& l, double& m) {
  l = (static_cast<double>(grid.width / 2) - x) * grid.scale_l;
  m = (y - static_cast<double>(grid.height / 2)) * grid.scale_m;
}

std::vector<double> distance_image(const ImageGrid& grid, RaDec pointing, const BeamImageOptions& options) {
  std::vector<double> out(grid.width * grid.height);
  for_each_radius(grid, pointing, options, [&](std::size_t i, double r) { out[i] = r; });
  return out;
}

std::vector<double> power_beam_image(const DishModel& model, const ImageGrid& grid, RaDec pointing,
                                     double frequency_hz, const BeamImageOptions& options) {
  const DishPattern pattern(model, frequency_hz);
  std::vector<double> out(grid.width * grid.height);
  for_each_radius(grid, pointing, options, [&](std::size_t i, double r) {
    out[i] = std::isnan(r) ? 0.0 : pattern.power(r);
  });
  return out;
}

}  // namespace gpuclean::beam

#include "data/sky_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpuclean::data {

std::vector<SkySource> random_sky(const SkySettings& s, Rng& rng) {
  std::vector<SkySource> out;
  const double lo = s.edge_fraction * static_cast<double>(s.size);
  const double hi = static_cast<double>(s.size) - 1.0 - lo;
  // Inverse CDF of a truncated power law dN/dS ~ S^-a between min and max flux.
  const double a1 = 1.0 - s.power_law_index;
  auto flux = [&] {
    const double u = rng.uniform();
    if (std::abs(a1) < 1e-9) return s.min_flux * std::pow(s.max_flux / s.min_flux, u);
    const double l = std::pow(s.min_flux, a1), h = std::pow(s.max_flux, a1);
    return std::pow(l + u * (h - l), 1.0 / a1);
  };
  for (std::size_t i = 0; i < s.points; ++i) {
    SkySource p;
    p.x = std::round(rng.uniform(lo, hi));
    p.y = std::round(rng.uniform(lo, hi));
    p.flux = flux();
    out.push_back(p);
  }
  for (std::size_t i = 0; i < s.gaussians; ++i) {
    SkySource g;
    g.kind = SkySource::Kind::kGaussian;
    g.x = rng.uniform(lo, hi);
    g.y = rng.uniform(lo, hi);
    g.flux = s.gaussian_max_flux > 0.0
                 ? s.gaussian_min_flux * std::pow(s.gaussian_max_flux / s.gaussian_min_flux, rng.uniform())
                 : 5.0 * flux();
    g.fwhm_major_px = s.beam_fwhm_px * rng.uniform(s.gaussian_min_beams, s.gaussian_max_beams);
    g.fwhm_minor_px = g.fwhm_major_px * rng.uniform(0.4, 1.0);
    g.pa_deg = rng.uniform(0.0, 180.0);
    out.push_back(g);
  }
  return out;
}

std::vector<float> render_sky(const std::vector<SkySource>& sources, std::size_t n) {
  std::vector<float> sky(n * n, 0.0f);
  const double k = 1.0 / (8.0 * std::log(2.0));  // sigma^2 = fwhm^2 k
  for (const auto& s : sources) {
    if (s.kind == SkySource::Kind::kPoint) {
      const auto x = static_cast<std::size_t>(s.x), y = static_cast<std::size_t>(s.y);
      if (x < n && y < n) sky[y * n + x] += static_cast<float>(s.flux);
      continue;
    }
    const double smaj2 = s.fwhm_major_px * s.fwhm_major_px * k;
    const double smin2 = s.fwhm_minor_px * s.fwhm_minor_px * k;
    const double pa = s.pa_deg * std::numbers::pi / 180.0;
    // Major axis direction in pixels: PA from +y (north) towards -x (east).
    const double ux = -std::sin(pa), uy = std::cos(pa);
    const long r = static_cast<long>(std::ceil(5.0 * std::sqrt(smaj2)));
    std::vector<std::pair<std::size_t, double>> cells;
    double sum = 0.0;
    for (long dy = -r; dy <= r; ++dy) {
      for (long dx = -r; dx <= r; ++dx) {
        const long x = static_cast<long>(std::round(s.x)) + dx, y = static_cast<long>(std::round(s.y)) + dy;
        if (x < 0 || y < 0 || x >= static_cast<long>(n) || y >= static_cast<long>(n)) continue;
        const double ox = static_cast<double>(x) - s.x, oy = static_cast<double>(y) - s.y;
        const double a = ox * ux + oy * uy, b = -ox * uy + oy * ux;
        const double v = std::exp(-0.5 * (a * a / smaj2 + b * b / smin2));
        cells.push_back({static_cast<std::size_t>(y) * n + static_cast<std::size_t>(x), v});
        sum += v;
      }
    }
    for (const auto& [i, v] : cells) sky[i] += static_cast<float>(s.flux * v / sum);
  }
  return sky;
}

}  // namespace gpuclean::data

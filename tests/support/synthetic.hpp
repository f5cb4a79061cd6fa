#pragma once
// Small analytic images for CLEAN tests: Gaussian and sidelobed PSFs, dirty images made of
// shifted, scaled PSFs, and a direct (double precision) convolution as an independent reference.

#include <cmath>
#include <vector>

#include "clean/host_image.hpp"
#include "clean/psf.hpp"

namespace gpuclean::test {

/// An elliptical Gaussian with a ring of negative sidelobes, peak 1 at (n/2, n/2).
inline clean::HostImage sidelobed_psf(std::size_t n, double sigma = 2.0) {
  clean::HostImage p(n, n);
  const double c = static_cast<double>(n / 2);
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x) {
      const double dx = static_cast<double>(x) - c, dy = static_cast<double>(y) - c;
      const double r2 = (dx * dx / 1.3 + dy * dy) / (sigma * sigma);
      p.at(x, y) = static_cast<float>(std::exp(-0.5 * r2) - 0.08 * std::exp(-0.5 * r2 / 9.0) * std::cos(std::sqrt(r2)));
    }
  const float peak = p.at(n / 2, n / 2);
  for (float& v : p.pixels) v /= peak;
  return p;
}

/// out(x) = sum_i flux_i * psf(x - x_i + c), linear, in double precision.
inline clean::HostImage convolve_direct(const clean::HostImage& model, const clean::PreparedPsf& psf) {
  clean::HostImage out(model.width, model.height);
  std::vector<double> acc(model.size(), 0.0);
  for (std::size_t sy = 0; sy < model.height; ++sy)
    for (std::size_t sx = 0; sx < model.width; ++sx) {
      const double f = model.at(sx, sy);
      if (f == 0.0) continue;
      for (std::size_t y = 0; y < model.height; ++y) {
        const auto py = static_cast<std::ptrdiff_t>(psf.peak_y) + static_cast<std::ptrdiff_t>(y) - static_cast<std::ptrdiff_t>(sy);
        if (py < 0 || py >= static_cast<std::ptrdiff_t>(psf.image.height)) continue;
        for (std::size_t x = 0; x < model.width; ++x) {
          const auto px = static_cast<std::ptrdiff_t>(psf.peak_x) + static_cast<std::ptrdiff_t>(x) - static_cast<std::ptrdiff_t>(sx);
          if (px < 0 || px >= static_cast<std::ptrdiff_t>(psf.image.width)) continue;
          acc[y * model.width + x] += f * psf.image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
        }
      }
    }
  for (std::size_t i = 0; i < acc.size(); ++i) out.pixels[i] = static_cast<float>(acc[i]);
  return out;
}

/// Adds a circular Gaussian of integrated flux `flux` and width `sigma` pixels centred on (cx, cy),
/// cut at 5 sigma.
inline void add_gaussian(clean::HostImage& sky, double cx, double cy, double sigma, double flux) {
  const double norm = flux / (2.0 * M_PI * sigma * sigma);
  for (std::size_t y = 0; y < sky.height; ++y)
    for (std::size_t x = 0; x < sky.width; ++x) {
      const double dx = static_cast<double>(x) - cx, dy = static_cast<double>(y) - cy;
      const double r2 = (dx * dx + dy * dy) / (sigma * sigma);
      if (r2 < 25.0) sky.at(x, y) += static_cast<float>(norm * std::exp(-0.5 * r2));
    }
}

struct PointSource {
  std::size_t x, y;
  float flux;
};

inline clean::HostImage dirty_of(const std::vector<PointSource>& sources, const clean::PreparedPsf& psf, std::size_t n) {
  clean::HostImage model(n, n);
  for (const auto& s : sources) model.at(s.x, s.y) += s.flux;
  return convolve_direct(model, psf);
}

}  // namespace gpuclean::test

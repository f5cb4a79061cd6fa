#include "clean/scale_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpuclean::clean {
namespace {

void normalise(HostImage& k) {
  double sum = 0.0;
  for (float v : k.pixels) sum += v;
  for (float& v : k.pixels) v = static_cast<float>(v / sum);
}

HostImage tapered_quadratic(double scale) {
  // Radius about scale / 2; the Hann taper reaches 0 just outside the grid.
  const std::size_t n = 2 * static_cast<std::size_t>(std::ceil(scale * 0.5)) + 1;
  HostImage k(n, n);
  const double c = 0.5 * static_cast<double>(n - 1);
  for (std::size_t y = 0; y < n; ++y) {
    for (std::size_t x = 0; x < n; ++x) {
      const double r = std::hypot(static_cast<double>(x) - c, static_cast<double>(y) - c);
      const double taper =
          2.0 * r <= static_cast<double>(n + 1) ? 0.5 * (1.0 + std::cos(2.0 * std::numbers::pi * r / (n + 1))) : 0.0;
      const double u = r / scale;
      k.at(x, y) = static_cast<float>(taper * (u < 1.0 ? 1.0 - u * u : 0.0));
    }
  }
  normalise(k);
  return k;
}

HostImage gaussian(double scale, std::size_t max_size) {
  const double sigma = scale * 3.0 / 16.0;
  std::size_t n = 2 * static_cast<std::size_t>(std::ceil(6.0 * sigma)) + 1;
  if (n > max_size) n = max_size % 2 ? max_size : max_size - 1;
  n = std::max<std::size_t>(n, 1);
  std::vector<double> g(n);
  const double c = static_cast<double>(n / 2);
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(i) - c;
    g[i] = std::exp(-d * d / (2.0 * sigma * sigma));
  }
  HostImage k(n, n);
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x) k.at(x, y) = static_cast<float>(g[x] * g[y]);
  normalise(k);
  return k;
}

}  // namespace

HostImage scale_kernel(double scale, ScaleShape shape, std::size_t max_size) {
  if (scale <= 0.0) return HostImage(1, 1, 1.0f);
  return shape == ScaleShape::kGaussian ? gaussian(scale, max_size) : tapered_quadratic(scale);
}

std::vector<double> automatic_scales(double beam_fwhm, std::size_t min_side, std::size_t max_scales) {
  std::vector<double> scales = {0.0};
  const double half = 0.5 * static_cast<double>(min_side);
  for (double s = 4.0 * beam_fwhm; s < half && (max_scales == 0 || scales.size() < max_scales); s *= 2.0) {
    scales.push_back(s);
  }
  return scales;
}

double scale_bias_factor(double scale, double beam_fwhm, double bias, std::size_t scale_count) {
  if (scale <= 0.0 || scale_count < 2) return 1.0;
  return std::pow(bias, -std::log2(scale / (2.0 * beam_fwhm)));
}

HostImage embed_centred(const HostImage& kernel, std::size_t size) {
  HostImage out(size, size);
  const std::size_t off = (size - kernel.width) / 2;
  for (std::size_t y = 0; y < kernel.height; ++y)
    for (std::size_t x = 0; x < kernel.width; ++x) out.at(x + off, y + off) = kernel.at(x, y);
  return out;
}

}  // namespace gpuclean::clean

#include "clean/local_rms.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <omp.h>

namespace gpuclean::clean {

std::vector<double> local_rms_taps(double fwhm_pixels) {
  const double sigma = fwhm_pixels / (2.0 * std::sqrt(2.0 * std::log(2.0)));
  const auto radius = static_cast<std::ptrdiff_t>(std::ceil(4.0 * sigma));
  std::vector<double> taps(static_cast<std::size_t>(2 * radius + 1));
  for (std::ptrdiff_t j = -radius; j <= radius; ++j)
    taps[static_cast<std::size_t>(j + radius)] = std::exp(-static_cast<double>(j * j) / (2.0 * sigma * sigma));
  return taps;
}

namespace {

// out[x] = sum_j t[j] in[x + j] over j = -radius .. radius with 0 <= x + j < len, each pixel's
// terms added in ascending j (the GPU's order); the loop over x innermost, so it vectorises.
void row_taps(const double* in, std::ptrdiff_t len, const std::vector<double>& taps, std::ptrdiff_t radius,
              double* out) {
  std::fill(out, out + len, 0.0);
  for (std::ptrdiff_t j = -radius; j <= radius; ++j) {
    const double t = taps[static_cast<std::size_t>(j + radius)];
    const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, -j), x1 = std::min(len, len - j);
    for (std::ptrdiff_t x = x0; x < x1; ++x) out[x] += t * in[x + j];
  }
}

}  // namespace

HostImage local_rms_map(const HostImage& image, const std::vector<double>& taps, int threads) {
  const auto w = static_cast<std::ptrdiff_t>(image.width), h = static_cast<std::ptrdiff_t>(image.height);
  const auto radius = static_cast<std::ptrdiff_t>(taps.size() / 2);
  const std::size_t n = image.size();
  std::vector<double> row_sq(n), row_valid(n);
  double total = 0.0;
  for (double t : taps) total += t;
  const double min_weight = kLocalRmsMinCoverage * total * total;
  const int used = n < (1u << 16) ? 1 : (threads > 0 ? threads : omp_get_max_threads());
  // Along rows: the window's sums of r^2 and of the finite-pixel indicator.
#pragma omp parallel num_threads(used)
  {
    std::vector<double> sq(static_cast<std::size_t>(w)), valid(static_cast<std::size_t>(w));
#pragma omp for schedule(static)
    for (std::ptrdiff_t y = 0; y < h; ++y) {
      for (std::ptrdiff_t x = 0; x < w; ++x) {
        const double v = image.pixels[static_cast<std::size_t>(y * w + x)];
        const bool finite = std::isfinite(v);
        sq[static_cast<std::size_t>(x)] = finite ? v * v : 0.0;
        valid[static_cast<std::size_t>(x)] = finite ? 1.0 : 0.0;
      }
      row_taps(sq.data(), w, taps, radius, row_sq.data() + y * w);
      row_taps(valid.data(), w, taps, radius, row_valid.data() + y * w);
    }
  }
  // Along columns, a row of outputs at a time, then the map.
  HostImage out(image.width, image.height);
#pragma omp parallel num_threads(used)
  {
    std::vector<double> s(static_cast<std::size_t>(w)), c(static_cast<std::size_t>(w));
#pragma omp for schedule(static)
    for (std::ptrdiff_t y = 0; y < h; ++y) {
      std::fill(s.begin(), s.end(), 0.0);
      std::fill(c.begin(), c.end(), 0.0);
      const std::ptrdiff_t lo = std::max<std::ptrdiff_t>(-radius, -y), hi = std::min(radius, h - 1 - y);
      for (std::ptrdiff_t j = lo; j <= hi; ++j) {
        const double t = taps[static_cast<std::size_t>(j + radius)];
        const double* rs = row_sq.data() + (y + j) * w;
        const double* rc = row_valid.data() + (y + j) * w;
        for (std::ptrdiff_t x = 0; x < w; ++x) {
          s[static_cast<std::size_t>(x)] += t * rs[x];
          c[static_cast<std::size_t>(x)] += t * rc[x];
        }
      }
      for (std::ptrdiff_t x = 0; x < w; ++x) {
        const double cx = c[static_cast<std::size_t>(x)];
        out.pixels[static_cast<std::size_t>(y * w + x)] =
            cx >= min_weight ? static_cast<float>(std::sqrt(s[static_cast<std::size_t>(x)] / cx)) : 0.0f;
      }
    }
  }
  return out;
}

LocalRmsWeights local_rms_weights(const HostImage& map) {
  LocalRmsWeights out;
  float lo = std::numeric_limits<float>::infinity(), hi = 0.0f;
  for (float v : map.pixels) {
    if (v > 0.0f) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  const float min_rms = std::isfinite(lo) ? lo : 0.0f;
  out.min_rms = min_rms;
  out.max_rms = hi;
  out.weights.resize(map.size());
  for (std::size_t i = 0; i < map.size(); ++i) out.weights[i] = local_rms_weight(map.pixels[i], min_rms);
  return out;
}

}  // namespace gpuclean::clean

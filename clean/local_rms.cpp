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

// out[i] = sum_j t[j] in[i + j] along one axis (stride `step`, length `len`), taps in order.
inline double tap_sum(const double* in, std::ptrdiff_t i, std::ptrdiff_t len, std::ptrdiff_t step,
                      const std::vector<double>& taps, std::ptrdiff_t radius) {
  const std::ptrdiff_t lo = std::max<std::ptrdiff_t>(-radius, -i), hi = std::min(radius, len - 1 - i);
  double acc = 0.0;
  for (std::ptrdiff_t j = lo; j <= hi; ++j) acc += taps[static_cast<std::size_t>(j + radius)] * in[(i + j) * step];
  return acc;
}

}  // namespace

HostImage local_rms_map(const HostImage& image, const std::vector<double>& taps, int threads) {
  const auto w = static_cast<std::ptrdiff_t>(image.width), h = static_cast<std::ptrdiff_t>(image.height);
  const auto radius = static_cast<std::ptrdiff_t>(taps.size() / 2);
  const std::size_t n = image.size();
  std::vector<double> sq(n), valid(n), row_sq(n), row_valid(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = image.pixels[i];
    const bool finite = std::isfinite(v);
    sq[i] = finite ? v * v : 0.0;
    valid[i] = finite ? 1.0 : 0.0;
  }
  double total = 0.0;
  for (double t : taps) total += t;
  const double min_weight = kLocalRmsMinCoverage * total * total;
  const int used = n < (1u << 16) ? 1 : (threads > 0 ? threads : omp_get_max_threads());
#pragma omp parallel for num_threads(used) schedule(static)
  for (std::ptrdiff_t y = 0; y < h; ++y) {
    for (std::ptrdiff_t x = 0; x < w; ++x) {
      row_sq[y * w + x] = tap_sum(sq.data() + y * w, x, w, 1, taps, radius);
      row_valid[y * w + x] = tap_sum(valid.data() + y * w, x, w, 1, taps, radius);
    }
  }
  HostImage out(image.width, image.height);
#pragma omp parallel for num_threads(used) schedule(static)
  for (std::ptrdiff_t y = 0; y < h; ++y) {
    for (std::ptrdiff_t x = 0; x < w; ++x) {
      const double s = tap_sum(row_sq.data() + x, y, h, w, taps, radius);
      const double c = tap_sum(row_valid.data() + x, y, h, w, taps, radius);
      out.pixels[static_cast<std::size_t>(y * w + x)] = c >= min_weight ? static_cast<float>(std::sqrt(s / c)) : 0.0f;
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

#include "clean/local_rms.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <omp.h>

#include "select/cpu_reference.hpp"

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

// out[x] = sum_j t[j] in[x + j] over j = -reach .. reach with 0 <= x + j < len (periodic: x + j
// modulo len), each pixel's terms added in ascending j (the GPU's order); the loop over x
// innermost, so it vectorises.
void row_taps(const double* in, std::ptrdiff_t len, const std::vector<double>& taps, std::ptrdiff_t radius,
              bool periodic, double* out) {
  std::fill(out, out + len, 0.0);
  const std::ptrdiff_t reach = local_rms_reach(radius, len, periodic);
  for (std::ptrdiff_t j = -reach; j <= reach; ++j) {
    const double t = taps[static_cast<std::size_t>(j + radius)];
    const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, -j), x1 = std::min(len, len - j);
    for (std::ptrdiff_t x = x0; x < x1; ++x) out[x] += t * in[x + j];
    if (!periodic) continue;
    for (std::ptrdiff_t x = 0; x < x0; ++x) out[x] += t * in[x + j + len];  // wrapped from the far end
    for (std::ptrdiff_t x = x1; x < len; ++x) out[x] += t * in[x + j - len];
  }
}

}  // namespace

double reach_sum(const std::vector<double>& taps, std::ptrdiff_t radius, std::ptrdiff_t reach) {
  double sum = 0.0;
  for (std::ptrdiff_t j = -reach; j <= reach; ++j) sum += taps[static_cast<std::size_t>(j + radius)];
  return sum;
}

HostImage local_rms_map(const HostImage& image, const std::vector<double>& taps, int threads, bool periodic) {
  const auto w = static_cast<std::ptrdiff_t>(image.width), h = static_cast<std::ptrdiff_t>(image.height);
  const auto radius = static_cast<std::ptrdiff_t>(taps.size() / 2);
  const std::size_t n = image.size();
  std::vector<double> row_sq(n), row_valid(n);
  double total = 0.0;
  for (double t : taps) total += t;
  const double min_weight = kLocalRmsMinCoverage * total * total;
  // A periodic window's mean is over all of it, NaN pixels as 0 (as radler's FFT convolution).
  const double window = reach_sum(taps, radius, local_rms_reach(radius, w, periodic)) *
                        reach_sum(taps, radius, local_rms_reach(radius, h, periodic));
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
      row_taps(sq.data(), w, taps, radius, periodic, row_sq.data() + y * w);
      row_taps(valid.data(), w, taps, radius, periodic, row_valid.data() + y * w);
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
      const std::ptrdiff_t reach = local_rms_reach(radius, h, periodic);
      const std::ptrdiff_t lo = periodic ? -reach : std::max<std::ptrdiff_t>(-reach, -y);
      const std::ptrdiff_t hi = periodic ? reach : std::min(reach, h - 1 - y);
      for (std::ptrdiff_t j = lo; j <= hi; ++j) {
        const double t = taps[static_cast<std::size_t>(j + radius)];
        const std::ptrdiff_t row = ((y + j) % h + h) % h;
        const double* rs = row_sq.data() + row * w;
        const double* rc = row_valid.data() + row * w;
        for (std::ptrdiff_t x = 0; x < w; ++x) {
          s[static_cast<std::size_t>(x)] += t * rs[x];
          c[static_cast<std::size_t>(x)] += t * rc[x];
        }
      }
      for (std::ptrdiff_t x = 0; x < w; ++x) {
        const double cx = periodic ? window : c[static_cast<std::size_t>(x)];
        out.pixels[static_cast<std::size_t>(y * w + x)] =
            cx >= min_weight ? static_cast<float>(std::sqrt(s[static_cast<std::size_t>(x)] / cx)) : 0.0f;
      }
    }
  }
  return out;
}

LocalRmsWeights local_rms_weights(const HostImage& map, double strength) {
  LocalRmsWeights out;
  float lo = std::numeric_limits<float>::infinity(), hi = 0.0f;
  for (float v : map.pixels) {
    if (v > 0.0f) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  const float min_rms = std::isfinite(lo) ? lo : 0.0f;
  out.min_rms = min_rms;
  out.max_rms = hi;
  out.weights.resize(map.size());
  for (std::size_t i = 0; i < map.size(); ++i) out.weights[i] = local_rms_weight(map.pixels[i], min_rms, strength);
  return out;
}

}  // namespace gpuclean::clean

namespace gpuclean::clean {

namespace {

std::vector<std::uint32_t> centres(std::size_t len, std::size_t step) {
  std::vector<std::uint32_t> c;
  for (std::size_t i = 0;; ++i) {
    c.push_back(static_cast<std::uint32_t>(std::min(i * step, len - 1)));
    if (i * step >= len - 1) break;
  }
  return c;
}

}  // namespace

MadGrid mad_grid(std::size_t width, std::size_t height, double window_pixels) {
  MadGrid g;
  g.box = std::max<std::size_t>(8, static_cast<std::size_t>(std::lround(window_pixels)));
  g.step = std::max<std::size_t>(1, g.box / 2);
  g.stride = (g.box + 63) / 64;
  g.cx = centres(width, g.step);
  g.cy = centres(height, g.step);
  return g;
}

std::vector<float> mad_box_sigmas(const HostImage& image, const MadGrid& g, int threads) {
  const std::size_t gx = g.cx.size(), gy = g.cy.size();
  std::vector<float> out(gx * gy);
  const int used = gx * gy < 64 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
#pragma omp parallel num_threads(used)
  {
    std::vector<float> v;
#pragma omp for schedule(dynamic, 16)
    for (std::ptrdiff_t b = 0; b < static_cast<std::ptrdiff_t>(gx * gy); ++b) {
      const auto bx = static_cast<std::size_t>(b) % gx, by = static_cast<std::size_t>(b) / gx;
      const std::ptrdiff_t half = static_cast<std::ptrdiff_t>(g.box / 2);
      const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, g.cx[bx] - half), y0 = std::max<std::ptrdiff_t>(0, g.cy[by] - half);
      const std::ptrdiff_t x1 = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(image.width), g.cx[bx] - half + static_cast<std::ptrdiff_t>(g.box));
      const std::ptrdiff_t y1 = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(image.height), g.cy[by] - half + static_cast<std::ptrdiff_t>(g.box));
      v.clear();
      const auto q = static_cast<std::ptrdiff_t>(g.stride);
      for (std::ptrdiff_t y = y0; y < y1; y += q)
        for (std::ptrdiff_t x = x0; x < x1; x += q) {
          const float p = image.pixels[static_cast<std::size_t>(y) * image.width + static_cast<std::size_t>(x)];
          if (std::isfinite(p)) v.push_back(p);
        }
      if (v.size() < kMadMinSamples) {
        out[static_cast<std::size_t>(b)] = -1.0f;
        continue;
      }
      const std::size_t mid = (v.size() - 1) / 2;  // the lower median, as clean::robust_sigma takes it
      const float median = select::order_statistic_cpu(v, mid);
      for (float& x : v) x = std::abs(x - median);
      const float mad = select::order_statistic_cpu(v, mid);
      out[static_cast<std::size_t>(b)] = static_cast<float>(1.4826 * static_cast<double>(mad));
    }
  }
  return out;
}

HostImage mad_interpolate(const std::vector<float>& sig, const MadGrid& g, std::size_t width, std::size_t height) {
  HostImage out(width, height);
  const std::size_t gx = g.cx.size(), gy = g.cy.size();
  auto cell = [&](const std::vector<std::uint32_t>& c, std::size_t p, double* f) {
    const std::size_t i = c.size() < 2 ? 0 : std::min(p / g.step, c.size() - 2);
    const std::size_t j = std::min(i + 1, c.size() - 1);
    *f = j == i ? 0.0 : (static_cast<double>(p) - c[i]) / (static_cast<double>(c[j]) - c[i]);
    return i;
  };
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t y = 0; y < static_cast<std::ptrdiff_t>(height); ++y) {
    double fy = 0.0;
    const std::size_t iy = cell(g.cy, static_cast<std::size_t>(y), &fy), jy = std::min(iy + 1, gy - 1);
    for (std::size_t x = 0; x < width; ++x) {
      double fx = 0.0;
      const std::size_t ix = cell(g.cx, x, &fx), jx = std::min(ix + 1, gx - 1);
      const float corner[4] = {sig[iy * gx + ix], sig[iy * gx + jx], sig[jy * gx + ix], sig[jy * gx + jx]};
      const double weight[4] = {(1.0 - fx) * (1.0 - fy), fx * (1.0 - fy), (1.0 - fx) * fy, fx * fy};
      double num = 0.0, den = 0.0;
      for (int k = 0; k < 4; ++k) {
        if (corner[k] < 0.0f) continue;
        num += weight[k] * corner[k];
        den += weight[k];
      }
      out.pixels[static_cast<std::size_t>(y) * width + x] = den > 0.0 ? static_cast<float>(num / den) : 0.0f;
    }
  }
  return out;
}

HostImage local_noise_map(const HostImage& image, const LocalRmsSettings& settings, double window_pixels, int threads) {
  if (settings.method == LocalRmsMethod::kRms)
    return local_rms_map(image, local_rms_taps(window_pixels), threads, settings.periodic);
  const MadGrid g = mad_grid(image.width, image.height, window_pixels);
  return mad_interpolate(mad_box_sigmas(image, g, threads), g, image.width, image.height);
}

}  // namespace gpuclean::clean

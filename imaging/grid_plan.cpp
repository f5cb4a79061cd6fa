#include "imaging/grid_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpuclean::imaging {

double n_minus_one(double l, double m) {
  const double r2 = l * l + m * m;
  return -r2 / (std::sqrt(1 - r2) + 1);
}

std::size_t good_fft_size(std::size_t n) {
  for (std::size_t m = std::max<std::size_t>(n, 1);; ++m) {
    std::size_t r = m;
    for (std::size_t p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

WRange w_range(std::span<const double> w, std::span<const float> weight) {
  WRange r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (weight[k] == 0) continue;
    r.min = std::min(r.min, std::abs(w[k]));
    r.max = std::max(r.max, std::abs(w[k]));
  }
  if (r.min > r.max) return {};
  return r;
}

GridPlan make_grid_plan(const ImageGeometry& image, const EsKernel& kernel, WRange w, bool wstacking) {
  if (image.width == 0 || image.height == 0 || !(image.scale > 0))
    throw std::invalid_argument("the image needs a size and a positive pixel scale");
  GridPlan p{image, kernel};
  p.wstacking = wstacking;
  const auto grid_size = [&](std::size_t n) {
    const auto half = static_cast<std::size_t>(std::ceil(kernel.sigma() * static_cast<double>(n) / 2));
    return std::max<std::size_t>({2 * good_fft_size(half), 16, 2 * static_cast<std::size_t>(kernel.support())});
  };
  p.nu = grid_size(image.width);
  p.nv = grid_size(image.height);
  // l² + m² is largest at the corner x = 0, y = 0 (|l| = W/2·δ, |m| = H/2·δ) and 0 at the centre pixel.
  const double l = pixel_l(image, 0), m = pixel_m(image, 0);
  if (l * l + m * m >= 1) throw std::invalid_argument("the image reaches past the horizon (l² + m² ≥ 1)");
  if (!wstacking) return p;
  const double t_lo = n_minus_one(l, m), t_hi = 0;
  p.nshift = -0.5 * (t_lo + t_hi);
  p.t_max = 0.5 * (t_hi - t_lo);
  // A field so small that n − 1 vanishes needs no w correction: one plane of W, dw arbitrary.
  p.dw = p.t_max > 0 ? 1 / (2 * kernel.sigma() * p.t_max) : 1;
  p.planes = static_cast<std::size_t>(std::floor((w.max - w.min) / p.dw + kernel.support()));
  p.w0 = 0.5 * (w.min + w.max) - 0.5 * static_cast<double>(p.planes - 1) * p.dw;
  return p;
}

GridPlan choose_grid_plan(const ImageGeometry& image, double epsilon, WRange w, std::size_t samples,
                          bool wstacking) {
  const auto candidates = es_kernel_candidates(per_dimension_epsilon(epsilon, wstacking));
  if (candidates.empty()) throw std::invalid_argument("no ES kernel reaches the requested accuracy");
  double best_cost = std::numeric_limits<double>::infinity();
  GridPlan best{image, candidates.front()};
  for (const EsKernel& k : candidates) {
    GridPlan p = make_grid_plan(image, k, w, wstacking);
    const double cells = static_cast<double>(p.nu * p.nv);
    const double W = k.support();
    const double cost = static_cast<double>(p.planes) * cells * std::log2(cells) +
                        static_cast<double>(samples) * W * W * (wstacking ? W : 1);
    if (cost < best_cost) best_cost = cost, best = p;
  }
  return best;
}

}  // namespace gpuclean::imaging

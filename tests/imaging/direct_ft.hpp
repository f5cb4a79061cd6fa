#pragma once
// The direct Fourier transform in double that the gridders are checked against (imaging-plan.md
// §4.7), and random samples inside the grid's band; shared by the CPU and GPU gridder tests.

#include <complex>
#include <cstddef>
#include <numbers>
#include <random>
#include <vector>

#include "imaging/gridder_cpu.hpp"

namespace gpuclean::imaging::direct_ft {

using cdouble = std::complex<double>;
constexpr double kArcsec = std::numbers::pi / 180 / 3600;
constexpr int kThreads = 2;

struct Data {
  std::vector<double> u, v, w;
  std::vector<std::complex<float>> vis;
  std::vector<float> weight;
  Samples samples() const { return {u, v, w, vis, weight}; }
};

// Random uvw inside the grid's band (|u|, |v| < 0.45/δ), w of both signs up to w_max; every 13th
// sample has weight 0.
inline Data random_uvw(std::size_t n, double scale, double w_max, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uv(-0.45 / scale, 0.45 / scale), ww(-w_max, w_max), wt(0.5, 1.5);
  Data d;
  for (std::size_t k = 0; k < n; ++k) {
    d.u.push_back(uv(rng));
    d.v.push_back(uv(rng));
    d.w.push_back(ww(rng));
    d.weight.push_back(k % 13 == 0 ? 0.0f : static_cast<float>(wt(rng)));
  }
  d.vis.resize(n);
  return d;
}

inline double phase_term(bool wstacking, double w, double l, double m) {
  return wstacking ? w * n_minus_one(l, m) : 0.0;
}

// D(x, y) = Σ cw Re(V e^{−2πi(u l + v m + w(n − 1))}), [y][x].
inline std::vector<double> direct_dirty(const ImageGeometry& g, const Data& d, bool wstacking) {
  std::vector<double> out(g.width * g.height);
#pragma omp parallel for num_threads(kThreads)
  for (std::size_t y = 0; y < g.height; ++y)
    for (std::size_t x = 0; x < g.width; ++x) {
      const double l = pixel_l(g, x), m = pixel_m(g, y);
      double sum = 0;
      for (std::size_t k = 0; k < d.u.size(); ++k) {
        const double turns = d.u[k] * l + d.v[k] * m + phase_term(wstacking, d.w[k], l, m);
        sum += d.weight[k] * std::real(cdouble(d.vis[k]) * std::polar(1.0, -2 * std::numbers::pi * turns));
      }
      out[y * g.width + x] = sum;
    }
  return out;
}

// V_k = Σ M(x, y) e^{+2πi(u l + v m + w(n − 1))}.
inline std::vector<cdouble> direct_predict(const ImageGeometry& g, const std::vector<double>& model, const Data& d,
                                           bool wstacking) {
  std::vector<cdouble> out(d.u.size());
#pragma omp parallel for num_threads(kThreads)
  for (std::size_t k = 0; k < d.u.size(); ++k) {
    cdouble sum = 0;
    for (std::size_t y = 0; y < g.height; ++y)
      for (std::size_t x = 0; x < g.width; ++x) {
        const double mv = model[y * g.width + x];
        if (mv == 0) continue;
        const double l = pixel_l(g, x), m = pixel_m(g, y);
        sum += mv * std::polar(1.0, 2 * std::numbers::pi * (d.u[k] * l + d.v[k] * m + phase_term(wstacking, d.w[k], l, m)));
      }
    out[k] = sum;
  }
  return out;
}

}  // namespace gpuclean::imaging::direct_ft

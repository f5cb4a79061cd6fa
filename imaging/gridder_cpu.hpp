#pragma once
// CPU reference of the w-stacking gridder (imaging-plan.md §4.1, §4.5): the path without a GPU and
// the reference the GPU gridder must match.

#include <complex>
#include <span>
#include <vector>

#include "imaging/grid_plan.hpp"

namespace gpuclean::imaging {

/// Samples in wavelengths; one value and weight per sample (weights only for the inversion).
struct Samples {
  std::span<const double> u, v, w;
  std::span<const std::complex<float>> vis;
  std::span<const float> weight;
};

/// D(x, y) = Σ_k cw_k Re(V_k e^{−2πi(u_k l + v_k m + w_k(n − 1))}) at every pixel (l, m of
/// pixel_l/pixel_m), row-major [y][x], not divided by Σ cw (the caller normalises). With
/// plan.wstacking false the w term is left out. Samples of weight 0 are skipped; the others must
/// have |w| inside the plan's range. `threads` ≤ 0: OpenMP's default.
std::vector<double> invert_cpu(const GridPlan& plan, const Samples& samples, int threads = 0);

/// V_k = Σ_{x,y} M(x, y) e^{+2πi(u_k l + v_k m + w_k(n − 1))}, the adjoint of invert_cpu with unit
/// weights; `model` is row-major [y][x] in Jy/pixel. Only u, v, w of `samples` are read, and every
/// sample's |w| must lie inside the plan's range (make the plan with unit weights).
std::vector<std::complex<double>> predict_cpu(const GridPlan& plan, std::span<const double> model,
                                              const Samples& samples, int threads = 0);

}  // namespace gpuclean::imaging

#pragma once
// Device twins of EsKernel::operator(), EsKernel::correction and the pixel geometry of
// grid_plan.hpp, written with the same operations in the same order as the CPU reference.

#include <cuda_runtime.h>

#include "imaging/gpu/gridder_device.hpp"

namespace gpuclean::imaging::gpu {

constexpr double kPi = 3.141592653589793238462643383279502884;

/// φ(x) = exp(β W ((1 − x²)^e0 − 1)) for (1 − x)(1 + x) > 0, else 0; x in double (the offset from
/// a cell in units of half the support), the value in float. (1 − x²)^e0 − 1 is formed as
/// expm1(e0·log1p(−x²)), which keeps float's relative precision where the exponent is small.
__device__ __forceinline__ float es_kernel(const DeviceGeometry& g, double x) {
  if ((1 - x) * (1 + x) <= 0) return 0.f;
  const float p = expm1f(g.e0 * log1pf(static_cast<float>(-x * x)));
  return expf(static_cast<float>(g.beta_w * static_cast<double>(p)));
}

/// c(s), the inverse of φ's Fourier transform at s cycles per cell (EsKernel::correction).
__device__ __forceinline__ double kernel_correction(const DeviceGeometry& g, double s) {
  double sum = 0;
  for (int i = 0; i < g.nodes; ++i) sum += g.weight[i] * cos(kPi * g.support * s * g.node[i]);
  return 1 / (2 * sum);
}

/// t = n − 1 + nshift at pixel (x, y): pixel_l, pixel_m and n_minus_one of grid_plan.
__device__ __forceinline__ double pixel_t(const DeviceGeometry& g, int x, int y) {
  const double l = -(static_cast<double>(x) - static_cast<double>(g.width / 2)) * g.scale;
  const double m = (static_cast<double>(y) - static_cast<double>(g.height / 2)) * g.scale;
  const double r2 = l * l + m * m;
  return -r2 / (sqrt(1 - r2) + 1) + g.nshift;
}

/// w of plane p (wavelengths).
__device__ __forceinline__ double plane_w(const DeviceGeometry& g, int plane) {
  return g.w0 + static_cast<double>(plane) * g.dw;
}

}  // namespace gpuclean::imaging::gpu

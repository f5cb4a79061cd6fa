#pragma once
// The joined minor cycle's pieces (joined_kernels.cu): the packed keys, the component's plane
// fluxes, one member's update and the record's integrated flux. Every product is rounded on its
// own (__fmul_rn), as MinorCycleCpu::run_joined computes.

#include <cstdint>

#include "clean/gpu/joined_kernels.hpp"
#include "clean/gpu/subtract_rn.cuh"
#include "clean/log_polynomial_fit.hpp"
#include "clean/packed_peak.hpp"

namespace gpuclean::clean::gpu {
namespace {

constexpr int kTeamThreads = 1024;  // a joined team: as many loads in flight as it takes
constexpr int kMaxPlanes = 1024;    // shared memory of the component's plane fluxes
constexpr int kChunk = 8;           // planes whose loads one member's update issues together

// Members are packed by slot (their position in the cluster, which is pixel order), so that the
// largest packed value is the brightest member with the lowest pixel, as in the CPU reference.
__device__ __forceinline__ unsigned long long pack_slot(float v, std::uint32_t slot, bool abs_key) {
  return v != v ? 0ull : pack_peak(abs_key ? fabsf(v) : v, slot, v < 0.0f);
}

__device__ __forceinline__ std::uint32_t slot_of(unsigned long long packed) {
  return ~static_cast<std::uint32_t>(packed >> 1) & 0x7FFFFFFFu;
}

// A component's --fit-spectral-log-pol fit, on one thread, out of line: inlined, its arrays took
// the team's registers and made the update loop spill.
__device__ __noinline__ void fit_log_component(const float* v, const double* x, const double* w, int planes, int terms,
                                               float* fitted) {
  fit_log_polynomial(v, x, w, planes, terms, fitted, nullptr);
}

// The component's plane fluxes from its member's plane values `best` (any address space): gain x
// the values, fitted first with a projection (--fit-spectral-pol) or, by thread 0, a logarithmic
// polynomial. `value` is shared scratch of `planes` floats. `flux` is ready after the caller's
// next barrier.
template <bool kLogFit>
__device__ __forceinline__ void component_fluxes(const JoinedTeamArgs& a, const float* best, float* value,
                                                 float* flux) {
  const int np = a.planes, t = static_cast<int>(threadIdx.x);
  if constexpr (kLogFit) {
    for (int p = t; p < np; p += kTeamThreads) value[p] = best[p];
    __syncthreads();
    if (t == 0) {
      fit_log_component(value, a.log_x, a.log_w, np, a.log_terms, flux);
      for (int p = 0; p < np; ++p) flux[p] = __fmul_rn(a.gain, flux[p]);
    }
  } else if (a.projection) {
    for (int p = t; p < np; p += kTeamThreads) value[p] = best[p];
    __syncthreads();
    for (int p = t; p < np; p += kTeamThreads) {
      float f = 0.0f;
      for (int j = 0; j < np; ++j) f = __fadd_rn(f, __fmul_rn(__ldg(a.projection + p * np + j), value[j]));
      flux[p] = __fmul_rn(a.gain, f);
    }
  } else {
    for (int p = t; p < np; p += kTeamThreads) flux[p] = __fmul_rn(a.gain, best[p]);
  }
}

// A member's key from its plane values `y` (any address space): integrated in plane order (x its
// --local-rms weight), as the CPU computes it.
__device__ __forceinline__ float member_key(const JoinedTeamArgs& a, const float* y, std::uint32_t xy) {
  float key = 0.0f;
  for (int p = 0; p < a.planes; ++p) {
    const float iw = __ldg(a.iweights + p);
    key = a.polarizations ? __fadd_rn(key, __fmul_rn(iw, __fmul_rn(y[p], y[p]))) : __fadd_rn(key, __fmul_rn(iw, y[p]));
  }
  if (a.polarizations) key = __fsqrt_rn(key);
  if (a.weights) key = __fmul_rn(key, __ldg(a.weights + (xy >> 16) * a.width + (xy & 0xFFFFu)));
  return key;
}

// One member's whole update, by one thread: its plane values `v` (updated) less flux x the patch at
// its offset `patch` (the planes' values together); returns its new key.
__device__ __forceinline__ float update_member(const JoinedTeamArgs& a, float* v, const float* patch,
                                               const float* flux, std::uint32_t xy) {
  const int np = a.planes;
  for (int p0 = 0; p0 < np; p0 += kChunk) {
    float x[kChunk], w[kChunk];
#pragma unroll
    for (int i = 0; i < kChunk; ++i) {
      if (p0 + i >= np) break;
      x[i] = v[p0 + i];
      w[i] = __ldg(patch + p0 + i);
    }
#pragma unroll
    for (int i = 0; i < kChunk; ++i) {
      if (p0 + i >= np) break;
      v[p0 + i] = subtract_rn(x[i], flux[p0 + i], w[i]);
    }
  }
  return member_key(a, v, xy);
}

// The integrated flux of a component's plane fluxes (the record's): the channels' weighted sum,
// or Stokes I's for polarizations.
__device__ __forceinline__ float integrated_flux(const JoinedTeamArgs& a, const float* flux) {
  if (a.polarizations) return flux[0];
  float total = 0.0f;
  for (int p = 0; p < a.planes; ++p) total = __fadd_rn(total, __fmul_rn(__ldg(a.iweights + p), flux[p]));
  return total;
}

}  // namespace
}  // namespace gpuclean::clean::gpu

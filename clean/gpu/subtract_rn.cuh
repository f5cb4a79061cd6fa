#pragma once
// The one subtraction of every GPU CLEAN loop (CUDA only). The CPU reference computes
// value - flux * psf with the product rounded first; __fmul_rn keeps nvcc from fusing it into
// an FMA, so that a GPU run makes the CPU run's components bit for bit.

namespace gpuclean::clean::gpu {

__device__ __forceinline__ float subtract_rn(float v, float flux, float psf) {
  return __fsub_rn(v, __fmul_rn(flux, psf));
}

}  // namespace gpuclean::clean::gpu

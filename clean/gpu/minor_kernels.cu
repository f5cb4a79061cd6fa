// The Högbom step. It subtracts with subtract_rn, the CPU reference's rounding.

#include <math_constants.h>

#include <algorithm>

#include "clean/gpu/minor_kernels.hpp"
#include "clean/gpu/subtract_rn.cuh"
#include "clean/packed_peak.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::clean::gpu {
namespace {

constexpr int kStepThreads = 256;

__device__ __forceinline__ unsigned long long block_max_once(unsigned long long v) {
  __shared__ unsigned long long s_warp[kStepThreads / 32];
  v = cuda::warp_max64(v);
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kStepThreads / 32 ? s_warp[threadIdx.x] : 0ull;
    v = cuda::warp_max64(v);
  }
  return v;  // valid in thread 0
}

__global__ void __launch_bounds__(kStepThreads) hogbom_step_kernel(HogbomStepArgs a, std::uint32_t step) {
  if (*a.stopped) return;
  const unsigned long long current = a.slots[step % 3];
  const UnpackedPeak p = unpack_peak(current, a.abs_key);
  // Every block reaches the same decision from the same slot.
  if (current == 0 || !(static_cast<double>(p.key) > a.limit) || step >= a.budget) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      *a.stopped = 1;
      *a.made = step;
    }
    return;
  }
  const float flux = __fmul_rn(a.gain, p.value);
  const std::size_t x = p.pixel % a.width, y = p.pixel / a.width;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.comp_pixels[step] = p.pixel;
    a.comp_fluxes[step] = flux;
    a.model[p.pixel] += flux;
    a.slots[(step + 2) % 3] = 0;  // read last by the previous step; written next by the next one
  }
  // Image pixel (ix, iy) sees PSF pixel (peak_x + ix - x, peak_y + iy - y).
  const auto ox = static_cast<std::ptrdiff_t>(a.peak_x) - static_cast<std::ptrdiff_t>(x);
  const auto oy = static_cast<std::ptrdiff_t>(a.peak_y) - static_cast<std::ptrdiff_t>(y);
  const std::size_t n = a.width * a.height;
  unsigned long long best = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t iy = i / a.width, ix = i - iy * a.width;
    const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(ix) + ox, py = static_cast<std::ptrdiff_t>(iy) + oy;
    float r = a.residual[i];
    if (px >= 0 && py >= 0 && px < static_cast<std::ptrdiff_t>(a.psf_width) &&
        py < static_cast<std::ptrdiff_t>(a.psf_height)) {
      r = subtract_rn(r, flux, a.psf[static_cast<std::size_t>(py) * a.psf_width + static_cast<std::size_t>(px)]);
      a.residual[i] = r;
    }
    const bool in_mask = a.mask[i] != 0 && !isnan(r);
    a.masked[i] = in_mask ? r : CUDART_NAN_F;
    if (in_mask) best = max(best, pack_peak(a.abs_key ? fabsf(r) : r, static_cast<std::uint32_t>(i), r < 0.0f));
  }
  best = block_max_once(best);
  if (threadIdx.x == 0 && best) atomicMax(&a.slots[(step + 1) % 3], best);
}

int step_blocks(std::size_t n) {
  const int max_blocks = std::max(cuda::sm_count(), 1) * 8;
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>((n + kStepThreads - 1) / kStepThreads,
                                                                         static_cast<std::size_t>(max_blocks))));
}

}  // namespace

void hogbom_step(cudaStream_t s, const HogbomStepArgs& a, std::uint32_t step) {
  hogbom_step_kernel<<<step_blocks(a.width * a.height), kStepThreads, 0, s>>>(a, step);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::clean::gpu

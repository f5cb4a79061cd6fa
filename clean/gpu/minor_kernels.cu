// Clark's minor cycle in one block, and the Högbom step. Rounding follows the CPU reference:
// value - flux * psf with the product rounded first (__fmul_rn keeps nvcc from fusing it).

#include <math_constants.h>

#include <algorithm>

#include "clean/gpu/minor_kernels.hpp"
#include "clean/gpu/packed_peak.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::clean::gpu {
namespace {

constexpr int kMinorThreads = 1024;
constexpr int kStepThreads = 256;

__device__ __forceinline__ unsigned long long warp_max(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Max over the block; every thread gets it. Two barriers; the shared slots may be reused by the
// next call at once (each is written only after the barrier that follows its last read).
__device__ __forceinline__ unsigned long long block_max(unsigned long long v, unsigned long long* s_warp,
                                                        unsigned long long* s_best) {
  v = warp_max(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) s_warp[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x >> 5) ? s_warp[lane] : 0ull;
    v = warp_max(v);
    if (lane == 0) *s_best = v;
  }
  __syncthreads();
  return *s_best;
}

__device__ __forceinline__ float subtract_rn(float v, float flux, float psf) {
  return __fsub_rn(v, __fmul_rn(flux, psf));
}

// First member whose packed (y << 16 | x) is >= key; members are in pixel order. Every thread
// searches the same addresses, so shared memory broadcasts them.
__device__ __forceinline__ std::uint32_t lower_bound(const std::uint32_t* xy, std::uint32_t count, std::uint32_t key) {
  std::uint32_t lo = 0, hi = count;
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) >> 1;
    if (xy[mid] < key) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Each thread owns members t, t + 1024, ... and keeps the best of them packed. A component only
// changes members in the patch rows, a contiguous run of members found by binary search; a
// thread rescans its members only when its own best was among the changed ones.
// kShared: the members live in shared memory (known at compile time, so that the loads are
// shared-memory loads rather than generic ones: the rescan and the searches are on the critical
// path of every component).
template <bool kShared>
__global__ void __launch_bounds__(kMinorThreads) minor_cycle_kernel(MinorCycleArgs a) {
  constexpr bool in_shared = kShared;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned long long s_warp[32], s_best;
  const std::uint32_t count = a.count;
  float* vals = in_shared ? reinterpret_cast<float*>(smem) : a.scratch_values;
  std::uint32_t* xy = in_shared ? reinterpret_cast<std::uint32_t*>(smem) + count : a.scratch_xy;
  float* acc = a.scratch_flux;
  const std::uint32_t width = a.width;
  const bool abs_key = a.abs_key;
  const std::uint32_t t = threadIdx.x, stride = blockDim.x;
  auto key_of = [abs_key](float v) { return abs_key ? fabsf(v) : v; };
  auto pixel_of = [width](std::uint32_t q) { return (q >> 16) * width + (q & 0xFFFFu); };
  auto pack = [&](std::uint32_t m) {
    const float v = vals[m];
    return pack_peak(key_of(v), pixel_of(xy[m]), v < 0.0f);
  };

  for (std::uint32_t m = t; m < count; m += stride) {
    const std::uint32_t pixel = a.pixels[m];
    vals[m] = a.values[m];
    xy[m] = ((pixel / width) << 16) | (pixel % width);
    acc[m] = 0.0f;
  }
  __syncthreads();
  unsigned long long local = 0;
  for (std::uint32_t m = t; m < count; m += stride) local = max(local, pack(m));

  const int hw = a.half_width, side = 2 * hw + 1;
  std::uint32_t made = 0;
  while (true) {
    const unsigned long long best = block_max(local, s_warp, &s_best);
    if (best == 0 || made >= a.budget) break;
    const UnpackedPeak p = unpack_peak(best, abs_key);
    if (!(static_cast<double>(p.key) > a.limit)) break;
    const float flux = __fmul_rn(a.gain, p.value);
    const int bx = static_cast<int>(p.pixel % width), by = static_cast<int>(p.pixel / width);
    if (t == 0) {
      a.comp_pixels[made] = p.pixel;
      a.comp_fluxes[made] = flux;
    }
    ++made;
    const std::uint32_t lo = lower_bound(xy, count, static_cast<std::uint32_t>(max(by - hw, 0)) << 16);
    const int top = by + hw + 1;  // the first row past the patch
    const std::uint32_t hi = top > 0xFFFF ? count : lower_bound(xy, count, static_cast<std::uint32_t>(top) << 16);
    const std::uint32_t mine = local ? unpack_peak(local, abs_key).pixel : 0xFFFFFFFFu;
    bool rescan = false;
    for (std::uint32_t m = lo + (t + stride - lo % stride) % stride; m < hi; m += stride) {
      const std::uint32_t q = xy[m];
      const int dx = static_cast<int>(q & 0xFFFFu) - bx;
      if (dx < -hw || dx > hw) continue;
      const int dy = static_cast<int>(q >> 16) - by;
      const float v = subtract_rn(vals[m], flux, __ldg(a.patch + (dy + hw) * side + (dx + hw)));
      vals[m] = v;
      if (dx == 0 && dy == 0) acc[m] += flux;
      if (pixel_of(q) == mine) rescan = true;
      else local = max(local, pack_peak(key_of(v), pixel_of(q), v < 0.0f));
    }
    if (rescan) {
      local = 0;
#pragma unroll 4
      for (std::uint32_t m = t; m < count; m += stride) local = max(local, pack(m));
    }
  }
  if (t == 0) *a.made = made;
  // Each member's flux, summed in component order as the CPU sums it, goes to delta and model.
  for (std::uint32_t m = t; m < count; m += stride) {
    const float f = acc[m];
    if (f != 0.0f) {
      const std::uint32_t pixel = pixel_of(xy[m]);
      a.delta[pixel] = f;
      a.model[pixel] += f;
    }
  }
}

__device__ __forceinline__ unsigned long long block_max_once(unsigned long long v) {
  __shared__ unsigned long long s_warp[kStepThreads / 32];
  v = warp_max(v);
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kStepThreads / 32 ? s_warp[threadIdx.x] : 0ull;
    v = warp_max(v);
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
  static const int max_blocks = [] {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    return std::max(sms, 1) * 8;
  }();
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>((n + kStepThreads - 1) / kStepThreads,
                                                                         static_cast<std::size_t>(max_blocks))));
}

}  // namespace

void run_minor_cycle(cudaStream_t s, const MinorCycleArgs& a) {
  static const int max_shared = [] {
    int device = 0, bytes = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    return bytes;
  }();
  const std::size_t want = static_cast<std::size_t>(a.count) * 8;
  const std::size_t static_bytes = 33 * sizeof(unsigned long long);
  const bool in_shared = want + static_bytes <= static_cast<std::size_t>(max_shared);
  const std::size_t dynamic = in_shared ? want : 0;
  if (in_shared) {
    GPUCLEAN_CUDA_TRY(cudaFuncSetAttribute(minor_cycle_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(dynamic)));
    minor_cycle_kernel<true><<<1, kMinorThreads, dynamic, s>>>(a);
  } else {
    minor_cycle_kernel<false><<<1, kMinorThreads, 0, s>>>(a);
  }
  GPUCLEAN_CHECK_LAUNCH();
}

void hogbom_step(cudaStream_t s, const HogbomStepArgs& a, std::uint32_t step) {
  hogbom_step_kernel<<<step_blocks(a.width * a.height), kStepThreads, 0, s>>>(a, step);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::clean::gpu

// Image-wide passes of GPU CLEAN: grid-stride loops, one atomic per block for reductions.

#include <cub/device/device_radix_sort.cuh>
#include <math_constants.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/packed_peak.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::clean::gpu {
namespace {

constexpr int kThreads = 256;

int grid_for(std::size_t n) {
  const int max_blocks = std::max(cuda::sm_count(), 1) * 8;
  const std::size_t need = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(need, static_cast<std::size_t>(max_blocks))));
}

using cuda::warp_max64;

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sums a pair of values over a kThreads block, then adds the block's pair to out[0], out[1]
// with one atomic each (thread 0). Every thread calls.
template <class T>
__device__ __forceinline__ void block_sum_pair_to(T a, T b, T* out) {
  __shared__ T s_a[kThreads / 32], s_b[kThreads / 32];
  a = warp_sum(a);
  b = warp_sum(b);
  if ((threadIdx.x & 31) == 0) {
    s_a[threadIdx.x >> 5] = a;
    s_b[threadIdx.x >> 5] = b;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) {
      a += s_a[w];
      b += s_b[w];
    }
    atomicAdd(&out[0], a);
    atomicAdd(&out[1], b);
  }
}

__global__ void apply_mask_kernel(const float* residual, const std::uint8_t* mask, float* masked, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    masked[i] = mask[i] ? residual[i] : CUDART_NAN_F;
}

__global__ void find_peak_kernel(const float* masked, std::size_t n, bool abs_key, unsigned long long* peak) {
  __shared__ unsigned long long s_warp[kThreads / 32];
  unsigned long long best = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = masked[i];
    if (!isnan(v)) best = max(best, pack_peak(abs_key ? fabsf(v) : v, static_cast<std::uint32_t>(i), v < 0.0f));
  }
  best = warp_max64(best);
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = best;
  __syncthreads();
  if (threadIdx.x < 32) {
    best = threadIdx.x < kThreads / 32 ? s_warp[threadIdx.x] : 0ull;
    best = warp_max64(best);
    if (threadIdx.x == 0 && best) atomicMax(peak, best);
  }
}

__global__ void count_above_kernel(const float* masked, std::size_t n, bool abs_key, float limit,
                                   unsigned long long* count) {
  __shared__ unsigned s_count;
  if (threadIdx.x == 0) s_count = 0;
  __syncthreads();
  unsigned mine = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = masked[i];
    mine += !isnan(v) && (abs_key ? fabsf(v) : v) > limit;
  }
  mine = warp_sum(mine);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(&s_count, mine);
  __syncthreads();
  if (threadIdx.x == 0 && s_count) atomicAdd(count, static_cast<unsigned long long>(s_count));
}

__global__ void finite_sums_kernel(const float* in, std::size_t n, double* sums) {
  double sum = 0.0, sq = 0.0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const double v = in[i];
    if (isfinite(v)) {
      sum += v;
      sq += v * v;
    }
  }
  block_sum_pair_to(sum, sq, sums);
}

__global__ void pad_image_kernel(const float* image, PaddedLayout l, float* padded) {
  const std::size_t total = l.ph * l.pitch;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t y = i / l.pitch, x = i - y * l.pitch;
    padded[i] = x < l.width && y < l.height ? image[y * l.width + x] : 0.0f;
  }
}

__global__ void place_kernel_kernel(KernelPlacement k, PaddedLayout l, float* padded) {
  const std::size_t w = static_cast<std::size_t>(k.dx_max - k.dx_min + 1);
  const std::size_t total = w * static_cast<std::size_t>(k.dy_max - k.dy_min + 1);
  const auto pw = static_cast<std::ptrdiff_t>(l.pw), ph = static_cast<std::ptrdiff_t>(l.ph);
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::ptrdiff_t dy = k.dy_min + static_cast<std::ptrdiff_t>(i / w);
    const std::ptrdiff_t dx = k.dx_min + static_cast<std::ptrdiff_t>(i % w);
    const std::size_t py = static_cast<std::size_t>((dy + ph) % ph);
    const std::size_t px = static_cast<std::size_t>((dx + pw) % pw);
    padded[py * l.pitch + px] =
        k.kernel[static_cast<std::size_t>(k.cy + dy) * k.kernel_width + static_cast<std::size_t>(k.cx + dx)] * k.scale;
  }
}

__global__ void multiply_spectra_kernel(cufftComplex* a, const cufftComplex* b, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const cufftComplex x = a[i], y = b[i];
    a[i] = make_cuFloatComplex(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
  }
}

__global__ void subtract_convolved_kernel(const float* padded, PaddedLayout l, float* residual,
                                          const std::uint8_t* mask, float* masked) {
  const std::size_t n = l.width * l.height;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t y = i / l.width, x = i - y * l.width;
    const float r = residual[i] - padded[y * l.pitch + x];
    residual[i] = r;
    masked[i] = mask[i] ? r : CUDART_NAN_F;
  }
}

__global__ void add_convolved_kernel(const float* padded, PaddedLayout l, const float* add, float* out) {
  const std::size_t n = l.width * l.height;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t y = i / l.width, x = i - y * l.width;
    out[i] = padded[y * l.pitch + x] + (add ? add[i] : 0.0f);
  }
}

__global__ void zero_nan_kernel(const float* in, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = in[i];
    out[i] = isnan(v) ? 0.0f : v;
  }
}

__global__ void mask_convolved_kernel(const float* padded, PaddedLayout l, const std::uint8_t* mask,
                                      std::size_t border, float* masked) {
  const std::size_t n = l.width * l.height;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t y = i / l.width, x = i - y * l.width;
    const bool inside = x >= border && x + border < l.width && y >= border && y + border < l.height;
    masked[i] = inside && mask[i] ? padded[y * l.pitch + x] : CUDART_NAN_F;
  }
}

__global__ void count_valid_kernel(const float* in, std::size_t n, bool finite_only, unsigned long long* count) {
  __shared__ unsigned s_count;
  if (threadIdx.x == 0) s_count = 0;
  __syncthreads();
  unsigned mine = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = in[i];
    mine += finite_only ? isfinite(v) : !isnan(v);
  }
  mine = warp_sum(mine);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(&s_count, mine);
  __syncthreads();
  if (threadIdx.x == 0 && s_count) atomicAdd(count, static_cast<unsigned long long>(s_count));
}

// splitmix64's and MurmurHash3's finalisers: bijections of 64-bit words with full avalanche.
__device__ __forceinline__ unsigned long long mix_a(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__device__ __forceinline__ unsigned long long mix_b(unsigned long long z) {
  z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
  z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return z ^ (z >> 33);
}

__global__ void abs_max_outside_kernel(const float* image, std::size_t width, std::size_t n, long long cx,
                                       long long cy, long long hw, unsigned long long* out) {
  unsigned best = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const long long y = static_cast<long long>(i / width), x = static_cast<long long>(i % width);
    if (x - cx >= -hw && x - cx <= hw && y - cy >= -hw && y - cy <= hw) continue;
    best = max(best, __float_as_uint(fabsf(image[i])));
  }
  best = __reduce_max_sync(0xffffffffu, best);
  if ((threadIdx.x & 31) == 0 && best) atomicMax(out, static_cast<unsigned long long>(best));
}

__global__ void content_hash_kernel(const std::uint32_t* words, std::size_t n, unsigned long long* hash) {
  unsigned long long a = 0, b = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const unsigned long long key = (static_cast<unsigned long long>(i) << 32) | words[i];
    a += mix_a(key);
    b += mix_b(key ^ 0x9e3779b97f4a7c15ull);
  }
  block_sum_pair_to(a, b, hash);
}

__global__ void place_gaussian_kernel(GaussianPlacement g, PaddedLayout l, float* padded) {
  const std::size_t w = static_cast<std::size_t>(2 * g.half_width + 1);
  const std::size_t total = w * static_cast<std::size_t>(2 * g.half_height + 1);
  const auto pw = static_cast<std::ptrdiff_t>(l.pw), ph = static_cast<std::ptrdiff_t>(l.ph);
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::ptrdiff_t dy = -g.half_height + static_cast<std::ptrdiff_t>(i / w);
    const std::ptrdiff_t dx = -g.half_width + static_cast<std::ptrdiff_t>(i % w);
    const double x = static_cast<double>(dx), y = static_cast<double>(dy);
    // PixelGaussian::value, step by step: (cyy dx dx - 2 cxy dx dy + cxx dy dy) / det.
    const double t1 = __dmul_rn(__dmul_rn(g.cyy, x), x);
    const double t2 = __dmul_rn(__dmul_rn(__dmul_rn(2.0, g.cxy), x), y);
    const double t3 = __dmul_rn(__dmul_rn(g.cxx, y), y);
    const double q = __ddiv_rn(__dadd_rn(__dsub_rn(t1, t2), t3), g.det);
    const float v = static_cast<float>(exp(-0.5 * q));
    const std::size_t py = static_cast<std::size_t>((dy + ph) % ph);
    const std::size_t px = static_cast<std::size_t>((dx + pw) % pw);
    padded[py * l.pitch + px] = v * g.scale;
  }
}

}  // namespace

void apply_mask(cudaStream_t s, const float* residual, const std::uint8_t* mask, float* masked, std::size_t n) {
  if (n == 0) return;
  apply_mask_kernel<<<grid_for(n), kThreads, 0, s>>>(residual, mask, masked, n);
  GPUCLEAN_CHECK_LAUNCH();
}

void find_peak(cudaStream_t s, const float* masked, std::size_t n, bool abs_key, unsigned long long* peak) {
  if (n == 0) return;
  find_peak_kernel<<<grid_for(n), kThreads, 0, s>>>(masked, n, abs_key, peak);
  GPUCLEAN_CHECK_LAUNCH();
}

void count_above(cudaStream_t s, const float* masked, std::size_t n, bool abs_key, float limit,
                 unsigned long long* count) {
  if (n == 0) return;
  count_above_kernel<<<grid_for(n), kThreads, 0, s>>>(masked, n, abs_key, limit, count);
  GPUCLEAN_CHECK_LAUNCH();
}

void finite_sums(cudaStream_t s, const float* in, std::size_t n, double* sums) {
  if (n == 0) return;
  finite_sums_kernel<<<grid_for(n), kThreads, 0, s>>>(in, n, sums);
  GPUCLEAN_CHECK_LAUNCH();
}

void pad_image(cudaStream_t s, const float* image, const PaddedLayout& l, float* padded) {
  pad_image_kernel<<<grid_for(l.ph * l.pitch), kThreads, 0, s>>>(image, l, padded);
  GPUCLEAN_CHECK_LAUNCH();
}

void place_kernel(cudaStream_t s, const KernelPlacement& k, const PaddedLayout& l, float* padded) {
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(padded, 0, l.ph * l.pitch * sizeof(float), s));
  const std::size_t total =
      static_cast<std::size_t>(k.dx_max - k.dx_min + 1) * static_cast<std::size_t>(k.dy_max - k.dy_min + 1);
  place_kernel_kernel<<<grid_for(total), kThreads, 0, s>>>(k, l, padded);
  GPUCLEAN_CHECK_LAUNCH();
}

void multiply_spectra(cudaStream_t s, cufftComplex* a, const cufftComplex* b, std::size_t count) {
  multiply_spectra_kernel<<<grid_for(count), kThreads, 0, s>>>(a, b, count);
  GPUCLEAN_CHECK_LAUNCH();
}

void subtract_convolved(cudaStream_t s, const float* padded, const PaddedLayout& l, float* residual,
                        const std::uint8_t* mask, float* masked) {
  subtract_convolved_kernel<<<grid_for(l.width * l.height), kThreads, 0, s>>>(padded, l, residual, mask, masked);
  GPUCLEAN_CHECK_LAUNCH();
}

std::size_t sort_by_pixel_temp_bytes(std::size_t count) {
  std::size_t bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                                    static_cast<std::uint32_t*>(nullptr),
                                                    static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
                                                    count));
  return bytes;
}

void sort_by_pixel(cudaStream_t s, void* temp, std::size_t temp_bytes, const std::uint32_t* pixels_in,
                   std::uint32_t* pixels_out, const float* values_in, float* values_out, std::size_t count,
                   std::size_t n) {
  if (count == 0) return;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, pixels_in, pixels_out, values_in, values_out,
                                                    count, 0, key_bits(n), s));
}

void add_convolved(cudaStream_t s, const float* padded, const PaddedLayout& l, const float* add, float* out) {
  add_convolved_kernel<<<grid_for(l.width * l.height), kThreads, 0, s>>>(padded, l, add, out);
  GPUCLEAN_CHECK_LAUNCH();
}

void zero_nan(cudaStream_t s, const float* in, float* out, std::size_t n) {
  if (n == 0) return;
  zero_nan_kernel<<<grid_for(n), kThreads, 0, s>>>(in, out, n);
  GPUCLEAN_CHECK_LAUNCH();
}

void mask_convolved(cudaStream_t s, const float* padded, const PaddedLayout& l, const std::uint8_t* mask,
                    std::size_t border, float* masked) {
  mask_convolved_kernel<<<grid_for(l.width * l.height), kThreads, 0, s>>>(padded, l, mask, border, masked);
  GPUCLEAN_CHECK_LAUNCH();
}

void count_valid(cudaStream_t s, const float* in, std::size_t n, bool finite_only, unsigned long long* count) {
  if (n == 0) return;
  count_valid_kernel<<<grid_for(n), kThreads, 0, s>>>(in, n, finite_only, count);
  GPUCLEAN_CHECK_LAUNCH();
}

void abs_max_outside(cudaStream_t s, const float* image, std::size_t width, std::size_t height, std::size_t cx,
                     std::size_t cy, std::size_t hw, unsigned long long* out) {
  const std::size_t n = width * height;
  if (n == 0) return;
  abs_max_outside_kernel<<<grid_for(n), kThreads, 0, s>>>(image, width, n, static_cast<long long>(cx),
                                                          static_cast<long long>(cy), static_cast<long long>(hw), out);
  GPUCLEAN_CHECK_LAUNCH();
}

void content_hash(cudaStream_t s, const std::uint32_t* words, std::size_t n, unsigned long long* hash) {
  if (n == 0) return;
  // Positions go into the upper half of each hashed word.
  if (n > 0xffffffffull) throw std::invalid_argument("content_hash: more than 2^32 words");
  content_hash_kernel<<<grid_for(n), kThreads, 0, s>>>(words, n, hash);
  GPUCLEAN_CHECK_LAUNCH();
}

void place_gaussian(cudaStream_t s, const GaussianPlacement& g, const PaddedLayout& l, float* padded) {
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(padded, 0, l.ph * l.pitch * sizeof(float), s));
  const std::size_t total =
      static_cast<std::size_t>(2 * g.half_width + 1) * static_cast<std::size_t>(2 * g.half_height + 1);
  place_gaussian_kernel<<<grid_for(total), kThreads, 0, s>>>(g, l, padded);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::clean::gpu

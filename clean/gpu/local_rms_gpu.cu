// The local noise map (local_rms.hpp) on the GPU. A thread per output pixel walks the taps in
// the CPU's order; neighbouring threads read neighbouring pixels of each tap, so every load is
// coalesced and the taps come from cache.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "clean/gpu/local_rms_gpu.hpp"
#include "clean/local_rms.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/pinned_staging.hpp"

namespace gpuclean::clean::gpu {
namespace {

const dim3 kBlock(32, 8);

dim3 grid2d(std::size_t width, std::size_t height) {
  return dim3(static_cast<unsigned>((width + kBlock.x - 1) / kBlock.x),
              static_cast<unsigned>((height + kBlock.y - 1) / kBlock.y));
}

// Along rows: the window's sums of r^2 and of the finite-pixel indicator.
__global__ void rows_kernel(const float* image, int width, int height, const double* taps, int radius, double* sq,
                            double* valid) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const float* row = image + static_cast<std::size_t>(y) * width;
  const int lo = max(-radius, -x), hi = min(radius, width - 1 - x);
  double s = 0.0, c = 0.0;
  for (int j = lo; j <= hi; ++j) {
    const double t = __ldg(taps + j + radius);
    const float v = row[x + j];
    const bool finite = isfinite(v);
    const double d = finite ? static_cast<double>(v) : 0.0;
    s = __dadd_rn(s, __dmul_rn(t, __dmul_rn(d, d)));
    c = __dadd_rn(c, __dmul_rn(t, finite ? 1.0 : 0.0));
  }
  const std::size_t i = static_cast<std::size_t>(y) * width + x;
  sq[i] = s;
  valid[i] = c;
}

// Along columns, then the map: sqrt(sum r^2 / sum finite) where the window is covered enough.
__global__ void columns_kernel(const double* sq, const double* valid, int width, int height, const double* taps,
                               int radius, double min_weight, float* map) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const int lo = max(-radius, -y), hi = min(radius, height - 1 - y);
  double s = 0.0, c = 0.0;
  for (int j = lo; j <= hi; ++j) {
    const double t = __ldg(taps + j + radius);
    const std::size_t i = static_cast<std::size_t>(y + j) * width + x;
    s = __dadd_rn(s, __dmul_rn(t, sq[i]));
    c = __dadd_rn(c, __dmul_rn(t, valid[i]));
  }
  map[static_cast<std::size_t>(y) * width + x] = c >= min_weight ? __double2float_rn(__dsqrt_rn(__ddiv_rn(s, c))) : 0.0f;
}

// range[0] = the smallest positive value's bits, range[1] = the largest's (positive floats
// order as their bit patterns).
__global__ void positive_range_kernel(const float* map, std::size_t n, unsigned int* range) {
  unsigned int lo = 0xFFFFFFFFu, hi = 0u;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = map[i];
    if (v > 0.0f) {
      const unsigned int b = __float_as_uint(v);
      lo = min(lo, b);
      hi = max(hi, b);
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    lo = min(lo, __shfl_xor_sync(0xFFFFFFFFu, lo, o));
    hi = max(hi, __shfl_xor_sync(0xFFFFFFFFu, hi, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMin(range, lo);
    atomicMax(range + 1, hi);
  }
}

__global__ void weights_kernel(const float* map, std::size_t n, float min_rms, float* weights) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float r = map[i];
    weights[i] = r > 0.0f ? __double2float_rn(__ddiv_rn(static_cast<double>(min_rms), static_cast<double>(r))) : 0.0f;
  }
}

__global__ void weigh_kernel(const float* in, const float* w, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = __fmul_rn(in[i], w[i]);
}

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096));
}

}  // namespace

void local_rms_gpu(cudaStream_t s, const float* image, std::size_t width, std::size_t height,
                   const std::vector<double>& taps, LocalRmsDevice& out) {
  const std::size_t n = width * height;
  const int radius = static_cast<int>(taps.size() / 2);
  double total = 0.0;
  for (double t : taps) total += t;
  cuda::DeviceBuffer<double> d_taps(taps.size(), s);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_taps.data(), taps.data(), taps.size() * sizeof(double), cudaMemcpyHostToDevice, s));
  if (out.map.size() != n) out.map = cuda::DeviceBuffer<float>(n, s), out.weights = cuda::DeviceBuffer<float>(n, s);
  {
    cuda::DeviceBuffer<double> sq(n, s), valid(n, s);  // freed in stream order after the columns
    const int w = static_cast<int>(width), h = static_cast<int>(height);
    rows_kernel<<<grid2d(width, height), kBlock, 0, s>>>(image, w, h, d_taps.data(), radius, sq.data(), valid.data());
    GPUCLEAN_CHECK_LAUNCH();
    columns_kernel<<<grid2d(width, height), kBlock, 0, s>>>(sq.data(), valid.data(), w, h, d_taps.data(), radius,
                                                            kLocalRmsMinCoverage * total * total, out.map.data());
    GPUCLEAN_CHECK_LAUNCH();
  }
  cuda::DeviceBuffer<unsigned int> range(2, s);
  const unsigned int init[2] = {0xFFFFFFFFu, 0u};
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(range.data(), init, sizeof init, cudaMemcpyHostToDevice, s));
  positive_range_kernel<<<blocks_for(n), 256, 0, s>>>(out.map.data(), n, range.data());
  GPUCLEAN_CHECK_LAUNCH();
  unsigned int bits[2] = {0, 0};
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(bits, range.data(), sizeof bits, cudaMemcpyDeviceToHost, s));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  float lo = 0.0f, hi = 0.0f;
  if (bits[0] != 0xFFFFFFFFu) std::memcpy(&lo, &bits[0], sizeof lo), std::memcpy(&hi, &bits[1], sizeof hi);
  out.min_rms = lo;
  out.max_rms = hi;
  weights_kernel<<<blocks_for(n), 256, 0, s>>>(out.map.data(), n, lo, out.weights.data());
  GPUCLEAN_CHECK_LAUNCH();
}

HostImage download_map(cudaStream_t s, const LocalRmsDevice& rms, std::size_t width, std::size_t height) {
  HostImage map(width, height);
  GPUCLEAN_CUDA_TRY(
      cudaMemcpyAsync(map.pixels.data(), rms.map.data(), map.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  return map;
}

std::size_t local_rms_gpu_bytes(std::size_t width, std::size_t height) {
  return width * height * (2 * sizeof(double) + 2 * sizeof(float));  // the two sums; map and weights
}

void weigh(cudaStream_t s, const float* in, const float* w, float* out, std::size_t n) {
  if (n == 0) return;
  weigh_kernel<<<blocks_for(n), 256, 0, s>>>(in, w, out, n);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::clean::gpu

// The local noise map (local_rms.hpp) on the GPU. A thread per output pixel walks the taps in
// the CPU's order; neighbouring threads read neighbouring pixels of each tap, so every load is
// coalesced and the taps come from cache.

#include <cub/block/block_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "clean/gpu/local_rms_gpu.hpp"
#include "clean/local_rms.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/pinned_staging.hpp"

#include <math_constants.h>

namespace gpuclean::clean::gpu {
namespace {

const dim3 kBlock(32, 8);

dim3 grid2d(std::size_t width, std::size_t height) {
  return dim3(static_cast<unsigned>((width + kBlock.x - 1) / kBlock.x),
              static_cast<unsigned>((height + kBlock.y - 1) / kBlock.y));
}

// Along rows: the window's sums of r^2 and of the finite-pixel indicator. A thread makes
// kRowRun outputs of one row, reading each input pixel once for all of them; every output adds
// its terms in ascending column order, as the CPU does.
constexpr int kRowRun = 16;

// `reach` (<= radius) bounds the taps used; `periodic`: indices wrap around the row (column).
__device__ __forceinline__ int wrapped(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }

__global__ void rows_kernel(const float* image, int width, int height, const double* taps, int radius, int reach,
                            bool periodic, double* sq, double* valid) {
  const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * kRowRun, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x0 >= width || y >= height) return;
  const float* row = image + static_cast<std::size_t>(y) * width;
  double s[kRowRun], c[kRowRun];
#pragma unroll
  for (int k = 0; k < kRowRun; ++k) s[k] = 0.0, c[k] = 0.0;
  const int first = periodic ? x0 - reach : max(x0 - reach, 0);
  // Periodic: from -reach to width - 1 + reach at most (reach <= (width - 1) / 2), one wrap either way.
  const int last = periodic ? min(x0 + kRowRun - 1, width - 1) + reach : min(x0 + kRowRun - 1 + reach, width - 1);
  for (int xx = first; xx <= last; ++xx) {
    const float v = row[wrapped(xx, width)];
    const bool finite = isfinite(v);
    const double d = finite ? static_cast<double>(v) : 0.0;
    const double d2 = __dmul_rn(d, d), f = finite ? 1.0 : 0.0;
#pragma unroll
    for (int k = 0; k < kRowRun; ++k) {
      const int j = xx - (x0 + k);
      if (j < -reach || j > reach) continue;
      const double t = __ldg(taps + j + radius);
      s[k] = __dadd_rn(s[k], __dmul_rn(t, d2));
      c[k] = __dadd_rn(c[k], __dmul_rn(t, f));
    }
  }
  const std::size_t base = static_cast<std::size_t>(y) * width;
#pragma unroll
  for (int k = 0; k < kRowRun; ++k) {
    if (x0 + k < width) sq[base + x0 + k] = s[k], valid[base + x0 + k] = c[k];
  }
}

// Along columns, then the map: sqrt(sum r^2 / sum finite) where the window is covered enough.
// A thread makes kColumnRun outputs of one column: each input row is read once for all of them,
// and every output still adds its terms in ascending row order.
constexpr int kColumnRun = 16;

// `window` > 0 (periodic): every output's mean is over the whole window, not its finite part.
__global__ void columns_kernel(const double* sq, const double* valid, int width, int height, const double* taps,
                               int radius, int reach, bool periodic, double window, double min_weight, float* map) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * kColumnRun;
  if (x >= width || y0 >= height) return;
  double s[kColumnRun], c[kColumnRun];
#pragma unroll
  for (int k = 0; k < kColumnRun; ++k) s[k] = 0.0, c[k] = 0.0;
  const int first = periodic ? y0 - reach : max(y0 - reach, 0);
  const int last = periodic ? min(y0 + kColumnRun - 1, height - 1) + reach
                            : min(y0 + kColumnRun - 1 + reach, height - 1);
  for (int yy = first; yy <= last; ++yy) {
    const std::size_t i = static_cast<std::size_t>(wrapped(yy, height)) * width + x;
    const double vs = sq[i], vc = valid[i];
#pragma unroll
    for (int k = 0; k < kColumnRun; ++k) {
      const int j = yy - (y0 + k);
      if (j < -reach || j > reach) continue;
      const double t = __ldg(taps + j + radius);
      s[k] = __dadd_rn(s[k], __dmul_rn(t, vs));
      c[k] = __dadd_rn(c[k], __dmul_rn(t, vc));
    }
  }
#pragma unroll
  for (int k = 0; k < kColumnRun; ++k) {
    const int y = y0 + k;
    const double weight = periodic ? window : c[k];
    if (y < height)
      map[static_cast<std::size_t>(y) * width + x] =
          weight >= min_weight ? __double2float_rn(__dsqrt_rn(__ddiv_rn(s[k], weight))) : 0.0f;
  }
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

// local_rms_weight (local_rms.hpp) on the device: (min_rms / rms)^strength, the same rounding.
__global__ void weights_kernel(const float* map, std::size_t n, float min_rms, double strength, float* weights) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float r = map[i];
    if (strength == 0.0) {
      weights[i] = 1.0f;
    } else if (!(r > 0.0f)) {
      weights[i] = 0.0f;
    } else {
      const double ratio = __ddiv_rn(static_cast<double>(min_rms), static_cast<double>(r));
      weights[i] = __double2float_rn(strength == 1.0 ? ratio : pow(ratio, strength));
    }
  }
}

// --local-rms-method mad: one block per box. Its finite samples (at most 64 x 64, in any order:
// the sorted result does not depend on it) are sorted in shared memory, the lower median taken,
// then the same for the absolute deviations from it: the CPU's order statistics, exactly.
constexpr int kMadThreads = 256, kMadItems = 16, kMadSamples = kMadThreads * kMadItems;
static_assert(kMadSamples == 64 * 64, "a box holds at most 64 x 64 samples");

__global__ void __launch_bounds__(kMadThreads) mad_boxes_kernel(const float* image, int width, int height,
                                                                const std::uint32_t* cx, const std::uint32_t* cy,
                                                                int box, int stride, float* sigmas) {
  using Sort = cub::BlockRadixSort<float, kMadThreads, kMadItems>;
  __shared__ typename Sort::TempStorage temp;
  __shared__ float vals[kMadSamples];
  __shared__ unsigned int count;
  const int half = box / 2;
  const int x0 = max(0, static_cast<int>(cx[blockIdx.x]) - half), y0 = max(0, static_cast<int>(cy[blockIdx.y]) - half);
  const int x1 = min(width, static_cast<int>(cx[blockIdx.x]) - half + box);
  const int y1 = min(height, static_cast<int>(cy[blockIdx.y]) - half + box);
  const int nx = (x1 - x0 + stride - 1) / stride, ny = (y1 - y0 + stride - 1) / stride;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  for (int k = threadIdx.x; k < nx * ny; k += kMadThreads) {
    const float v = image[static_cast<std::size_t>(y0 + (k / nx) * stride) * width + x0 + (k % nx) * stride];
    if (isfinite(v)) vals[atomicAdd(&count, 1u)] = v;
  }
  __syncthreads();
  const unsigned int m = count;
  auto sort = [&]() {
    float keys[kMadItems];
    for (int i = 0; i < kMadItems; ++i) {
      const unsigned int j = threadIdx.x * kMadItems + i;
      keys[i] = j < m ? vals[j] : CUDART_INF_F;
    }
    __syncthreads();
    Sort(temp).Sort(keys);
    for (int i = 0; i < kMadItems; ++i) vals[threadIdx.x * kMadItems + i] = keys[i];
    __syncthreads();
  };
  float sigma = -1.0f;
  if (m >= kMadMinSamples) {
    sort();
    const float median = vals[(m - 1) / 2];
    __syncthreads();
    for (unsigned int j = threadIdx.x; j < m; j += kMadThreads) vals[j] = fabsf(__fsub_rn(vals[j], median));
    __syncthreads();
    sort();
    sigma = __double2float_rn(__dmul_rn(1.4826, static_cast<double>(vals[(m - 1) / 2])));
  }
  if (threadIdx.x == 0) sigmas[blockIdx.y * gridDim.x + blockIdx.x] = sigma;
}

// Bilinear between the box centres over the valid ones, in the CPU's order of operations.
__device__ __forceinline__ unsigned int mad_cell(const std::uint32_t* c, unsigned int n, unsigned int p,
                                                 unsigned int step, double* f) {
  const unsigned int i = n < 2 ? 0 : min(p / step, n - 2), j = min(i + 1, n - 1);
  *f = j == i ? 0.0 : __ddiv_rn(static_cast<double>(p) - c[i], static_cast<double>(c[j]) - c[i]);
  return i;
}

__global__ void mad_interpolate_kernel(const float* sig, const std::uint32_t* cx, const std::uint32_t* cy,
                                       unsigned int gx, unsigned int gy, unsigned int step, int width, int height,
                                       float* map) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  double fx = 0.0, fy = 0.0;
  const unsigned int iy = mad_cell(cy, gy, y, step, &fy), jy = min(iy + 1, gy - 1);
  const unsigned int ix = mad_cell(cx, gx, x, step, &fx), jx = min(ix + 1, gx - 1);
  const float corner[4] = {sig[iy * gx + ix], sig[iy * gx + jx], sig[jy * gx + ix], sig[jy * gx + jx]};
  const double ux = __dsub_rn(1.0, fx), uy = __dsub_rn(1.0, fy);
  const double weight[4] = {__dmul_rn(ux, uy), __dmul_rn(fx, uy), __dmul_rn(ux, fy), __dmul_rn(fx, fy)};
  double num = 0.0, den = 0.0;
  for (int k = 0; k < 4; ++k) {
    if (corner[k] < 0.0f) continue;
    num = __dadd_rn(num, __dmul_rn(weight[k], static_cast<double>(corner[k])));
    den = __dadd_rn(den, weight[k]);
  }
  map[static_cast<std::size_t>(y) * width + x] = den > 0.0 ? __double2float_rn(__ddiv_rn(num, den)) : 0.0f;
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

namespace {

void rms_map(cudaStream_t s, const float* image, std::size_t width, std::size_t height, double window_pixels,
             bool periodic, float* map) {
  const std::size_t n = width * height;
  const std::vector<double> taps = local_rms_taps(window_pixels);
  const int radius = static_cast<int>(taps.size() / 2);
  double total = 0.0;
  for (double t : taps) total += t;
  const int reach_x = static_cast<int>(local_rms_reach(radius, static_cast<std::ptrdiff_t>(width), periodic));
  const int reach_y = static_cast<int>(local_rms_reach(radius, static_cast<std::ptrdiff_t>(height), periodic));
  const double window = reach_sum(taps, radius, reach_x) * reach_sum(taps, radius, reach_y);
  cuda::DeviceBuffer<double> d_taps(taps.size(), s);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_taps.data(), taps.data(), taps.size() * sizeof(double), cudaMemcpyHostToDevice, s));
  {
    cuda::DeviceBuffer<double> sq(n, s), valid(n, s);  // freed in stream order after the columns
    const int w = static_cast<int>(width), h = static_cast<int>(height);
    const dim3 rows_grid(static_cast<unsigned>((width + kBlock.x * kRowRun - 1) / (kBlock.x * kRowRun)),
                         static_cast<unsigned>((height + kBlock.y - 1) / kBlock.y));
    rows_kernel<<<rows_grid, kBlock, 0, s>>>(image, w, h, d_taps.data(), radius, reach_x, periodic, sq.data(),
                                             valid.data());
    GPUCLEAN_CHECK_LAUNCH();
    const dim3 columns_grid(static_cast<unsigned>((width + kBlock.x - 1) / kBlock.x),
                            static_cast<unsigned>((height + kBlock.y * kColumnRun - 1) / (kBlock.y * kColumnRun)));
    columns_kernel<<<columns_grid, kBlock, 0, s>>>(sq.data(), valid.data(), w, h, d_taps.data(), radius, reach_y,
                                                   periodic, window, kLocalRmsMinCoverage * total * total, map);
    GPUCLEAN_CHECK_LAUNCH();
  }
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));  // the taps may go
}

void mad_map(cudaStream_t s, const float* image, std::size_t width, std::size_t height, double window_pixels,
             float* map) {
  const MadGrid g = mad_grid(width, height, window_pixels);
  const std::size_t gx = g.cx.size(), gy = g.cy.size();
  cuda::DeviceBuffer<std::uint32_t> cx(gx, s), cy(gy, s);
  cuda::DeviceBuffer<float> sig(gx * gy, s);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(cx.data(), g.cx.data(), gx * 4, cudaMemcpyHostToDevice, s));
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(cy.data(), g.cy.data(), gy * 4, cudaMemcpyHostToDevice, s));
  mad_boxes_kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), kMadThreads, 0, s>>>(
      image, static_cast<int>(width), static_cast<int>(height), cx.data(), cy.data(), static_cast<int>(g.box),
      static_cast<int>(g.stride), sig.data());
  GPUCLEAN_CHECK_LAUNCH();
  mad_interpolate_kernel<<<grid2d(width, height), kBlock, 0, s>>>(sig.data(), cx.data(), cy.data(),
                                                                  static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                                                                  static_cast<unsigned>(g.step), static_cast<int>(width),
                                                                  static_cast<int>(height), map);
  GPUCLEAN_CHECK_LAUNCH();
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));  // the centres may go
}

}  // namespace

void local_noise_gpu(cudaStream_t s, const float* image, std::size_t width, std::size_t height,
                     const LocalRmsSettings& settings, double window_pixels, LocalRmsDevice& out) {
  const std::size_t n = width * height;
  if (out.map.size() != n) out.map = cuda::DeviceBuffer<float>(n, s), out.weights = cuda::DeviceBuffer<float>(n, s);
  if (settings.method == LocalRmsMethod::kMad) mad_map(s, image, width, height, window_pixels, out.map.data());
  else rms_map(s, image, width, height, window_pixels, settings.periodic, out.map.data());
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
  weights_kernel<<<blocks_for(n), 256, 0, s>>>(out.map.data(), n, lo, settings.strength, out.weights.data());
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

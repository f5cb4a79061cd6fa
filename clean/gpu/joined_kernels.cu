// See joined_kernels.hpp. Every product is rounded on its own (__fmul_rn), as the CPU computes.

#include <math_constants.h>

#include <algorithm>
#include <stdexcept>

#include "clean/gpu/joined_kernels.hpp"
#include "clean/gpu/subtract_rn.cuh"
#include "clean/packed_peak.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/detail/warp_util.cuh"

namespace gpuclean::clean::gpu {
namespace {

using select::detail::kFullMask;
using select::detail::warp_max64;
constexpr int kBlock = 256;
constexpr int kMaxPlanes = 1024;  // shared memory of the component's plane values

__device__ __forceinline__ unsigned long long pack_slot(float v, std::uint32_t slot, bool abs_key) {
  return v != v ? 0ull : pack_peak(abs_key ? fabsf(v) : v, slot, v < 0.0f);
}

// plane_set.hpp's integrate(): v[0], v[stride], ... in plane order.
__device__ __forceinline__ float integrate(const float* v, std::size_t stride, int planes, bool pol, const float* w) {
  float s = 0.0f;
  if (!pol) {
    for (int p = 0; p < planes; ++p) s = __fadd_rn(s, __fmul_rn(__ldg(w + p), v[p * stride]));
    return s;
  }
  for (int p = 0; p < planes; ++p) {
    const float x = v[p * stride];
    s = __fadd_rn(s, __fmul_rn(x, x));
  }
  return __fsqrt_rn(s);
}

struct JoinedShared {
  unsigned long long best[kBlock / 32];
  unsigned long long record;
  unsigned int item, stop;
  float value[kMaxPlanes];
  float flux[kMaxPlanes];
};

__device__ void joined_team(const JoinedTeamArgs& a, ClusterRange range, JoinedShared& sh) {
  const std::uint32_t t = threadIdx.x, lane = t & 31, warp = t >> 5, base = range.x, m = range.y - range.x;
  const int np = a.planes, hw = a.half_width, side = 2 * hw + 1;
  for (std::uint32_t j = t; j < m; j += kBlock) {
    const std::uint32_t q = a.xy[base + j];
    const std::size_t pixel = static_cast<std::size_t>(q >> 16) * a.width + (q & 0xFFFFu);
    for (int p = 0; p < np; ++p) a.vals[p * static_cast<std::size_t>(a.stride) + base + j] = a.residuals[p * a.plane_pixels + pixel];
    a.keys[base + j] = a.keys_in[base + j];
  }
  __syncthreads();
  std::uint32_t made = 0;
  unsigned long long order = ~0ull;
  while (true) {
    unsigned long long local = 0;
    for (std::uint32_t j = t; j < m; j += kBlock) local = max(local, pack_slot(a.keys[base + j], j, a.abs_key));
    local = warp_max64(local);
    if (lane == 0) sh.best[warp] = local;
    if (t == 0) sh.stop = *static_cast<volatile unsigned int*>(&a.counters->overflow);
    __syncthreads();
    const unsigned long long best = warp_max64(lane < kBlock / 32 ? sh.best[lane] : 0ull);
    const bool stop = sh.stop != 0;  // another team filled the pool: the host reruns the cycle
    __syncthreads();  // sh.best and sh.stop are rewritten next round
    if (best == 0 || made >= a.budget) break;
    const UnpackedPeak pk = unpack_peak(best, a.abs_key);
    if (!(static_cast<double>(pk.key) > a.limit)) break;
    if (stop) break;
    const std::uint32_t slot = pk.pixel, q = a.xy[base + slot];
    const int bx = static_cast<int>(q & 0xFFFFu), by = static_cast<int>(q >> 16);
    const std::uint32_t pixel = static_cast<std::uint32_t>(by) * a.width + static_cast<std::uint32_t>(bx);
    for (int p = t; p < np; p += kBlock) sh.value[p] = a.vals[p * static_cast<std::size_t>(a.stride) + base + slot];
    __syncthreads();
    for (int p = t; p < np; p += kBlock) {
      float f = sh.value[p];
      if (a.projection) {
        f = 0.0f;
        for (int j = 0; j < np; ++j) f = __fadd_rn(f, __fmul_rn(__ldg(a.projection + p * np + j), sh.value[j]));
      }
      sh.flux[p] = __fmul_rn(a.gain, f);
    }
    order = min(order, pack_peak(pk.key, pixel, pk.value < 0.0f));
    __syncthreads();
    if (t == 0) {
      float total = 0.0f;
      if (a.polarizations) total = sh.flux[0];
      else
        for (int p = 0; p < np; ++p) total = __fadd_rn(total, __fmul_rn(__ldg(a.iweights + p), sh.flux[p]));
      const unsigned long long r = atomicAdd(&a.counters->records, 1ull);
      if (r >= a.pool_capacity) {
        atomicExch(&a.counters->overflow, 1u);
        sh.record = ~0ull;
      } else {
        sh.record = r;
        a.rec_pixel[r] = pixel;
        a.rec_flux[r] = total;
        a.rec_order[r] = order;
      }
    }
    __syncthreads();
    const unsigned long long r = sh.record;
    if (r == ~0ull) break;
    for (int p = t; p < np; p += kBlock) a.rec_plane_flux[r * np + p] = sh.flux[p];
    ++made;
    for (std::uint32_t j = t; j < m; j += kBlock) {
      const std::uint32_t qj = a.xy[base + j];
      const int dx = static_cast<int>(qj & 0xFFFFu) - bx, dy = static_cast<int>(qj >> 16) - by;
      if (dx < -hw || dx > hw || dy < -hw || dy > hw) continue;
      float* v = a.vals + base + j;
      for (int p = 0; p < np; ++p) {
        float* vp = v + p * static_cast<std::size_t>(a.stride);
        *vp = subtract_rn(*vp, sh.flux[p], __ldg(a.patches + static_cast<std::size_t>(p) * side * side +
                                                 (dy + hw) * side + (dx + hw)));
      }
      float key = integrate(v, a.stride, np, a.polarizations, a.iweights);
      if (a.weights) key = __fmul_rn(key, __ldg(a.weights + (qj >> 16) * a.width + (qj & 0xFFFFu)));
      a.keys[base + j] = key;
    }
    __syncthreads();
  }
  if (t == 0) atomicMax(&a.counters->longest, made);
  __syncthreads();
}

__global__ void __launch_bounds__(kBlock) joined_teams_kernel(const JoinedTeamArgs a) {
  __shared__ JoinedShared sh;
  const unsigned int n_big = a.counters->n_big, total = n_big + a.counters->n_small;
  while (true) {
    if (threadIdx.x == 0) sh.item = atomicAdd(&a.counters->next_big, 1u);
    __syncthreads();
    const unsigned int item = sh.item;
    __syncthreads();
    if (item >= total) break;
    joined_team(a, item < n_big ? a.big[item] : a.small[item - n_big], sh);
  }
}

__global__ void emit_plane_fluxes_kernel(const std::uint32_t* order, std::uint32_t made, const float* rec, int planes,
                                         float* comp, std::size_t stride) {
  const std::size_t total = static_cast<std::size_t>(made) * planes;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = i / planes, p = i - r * planes;
    const std::size_t src = order ? order[r] : r;
    comp[p * stride + r] = rec[src * planes + p];
  }
}

__global__ void integrate_planes_kernel(const float* residuals, int planes, std::size_t pixels, bool pol,
                                        const float* w, const std::uint8_t* mask, float* integrated, float* masked) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < pixels;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    bool nan = false;
    for (int p = 0; p < planes; ++p) nan = nan || isnan(residuals[p * pixels + i]);
    const float v = nan ? CUDART_NAN_F : integrate(residuals + i, pixels, planes, pol, w);
    integrated[i] = v;
    masked[i] = mask[i] ? v : CUDART_NAN_F;
  }
}

int grid_for(std::size_t n) {
  const std::size_t need = (n + kBlock - 1) / kBlock;
  return static_cast<int>(need < 4096 ? (need ? need : 1) : 4096);
}

}  // namespace

void launch_joined_teams(cudaStream_t s, const JoinedTeamArgs& a) {
  if (a.planes > kMaxPlanes) throw std::invalid_argument("joined minor cycle: more than 1024 planes");
  joined_teams_kernel<<<std::max(cuda::sm_count(), 1) * 4, kBlock, 0, s>>>(a);
  GPUCLEAN_CHECK_LAUNCH();
}

void emit_plane_fluxes(cudaStream_t s, const std::uint32_t* order, std::uint32_t made, const float* rec_plane_flux,
                       int planes, float* comp, std::size_t comp_stride) {
  if (made == 0) return;
  emit_plane_fluxes_kernel<<<grid_for(static_cast<std::size_t>(made) * planes), kBlock, 0, s>>>(
      order, made, rec_plane_flux, planes, comp, comp_stride);
  GPUCLEAN_CHECK_LAUNCH();
}

void integrate_planes(cudaStream_t s, const float* residuals, int planes, std::size_t pixels, bool polarizations,
                      const float* iweights, const std::uint8_t* mask, float* integrated, float* masked) {
  integrate_planes_kernel<<<grid_for(pixels), kBlock, 0, s>>>(residuals, planes, pixels, polarizations, iweights,
                                                              mask, integrated, masked);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::clean::gpu

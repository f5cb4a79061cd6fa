// Gridding and degridding of one w-plane (imaging-plan.md §4.4).
// Gridding is cuFINUFFT's "SM" subproblem method (Shih et al. 2021): one block per subproblem
// (≤ 1024 samples of one 32×32-cell tile and one first plane) accumulates the samples'
// W×W footprints in a (32 + W)² tile of shared memory with shared atomics, then adds the tile's
// nonzero cells to the grid with global atomics (tiles overlap only in their W-cell halos and
// where several first planes share a tile). A sparse subproblem, whose samples touch fewer
// cells than the tile has (n·W² ≤ (32 + W)²: most of them in wide fields, where a tile holds a
// few samples per first plane), skips the tile: one warp per sample adds its W² products
// straight to the grid, the same products in another order. Degridding gathers instead: one
// thread per sample, W² cells, no atomics.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "imaging/gpu/es_device.cuh"
#include "imaging/gpu/gridder_device.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::imaging::gpu {
namespace {

constexpr int kGridThreads = 256;
constexpr int kDegridThreads = 256;

__device__ __forceinline__ void add_to_grid(float2* cell, float2 v) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(cell, v);  // one vector atomic on sm_90
#else
  atomicAdd(&cell->x, v.x);
  atomicAdd(&cell->y, v.y);
#endif
}

// The kernel weights of one sample along u and v; the w weight of `plane` folded into v.
template <int W>
__device__ __forceinline__ void footprint(const DeviceGeometry& g, const Records& r, std::uint32_t j, int plane,
                                          float (&fu)[W], float (&fv)[W]) {
  constexpr double h = 0.5 * W;
  const float fw = g.wstacking ? es_kernel(g, (static_cast<double>(plane) - r.kw[j]) / h) : 1.f;
  const double du = r.du[j], dv = r.dv[j];
#pragma unroll
  for (int a = 0; a < W; ++a) {
    fu[a] = es_kernel(g, (a - du) / h);
    fv[a] = es_kernel(g, (a - dv) / h) * fw;
  }
}

// Sparse subproblem [j0, j1): warp k of the block takes samples j0 + k, j0 + k + warps, ...;
// lane a < W holds fu[a], lane W + b holds fv[b] (footprint's values), lanes spread the W² cells.
template <int W, int IMAGES>
__device__ void grid_direct(const DeviceGeometry& g, const Records& r, int plane, std::uint32_t j0, std::uint32_t j1,
                            std::size_t cells, float2* grids) {
  constexpr double h = 0.5 * W;
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (std::uint32_t j = j0 + threadIdx.x / 32; j < j1; j += warps) {
    const float fw = g.wstacking ? es_kernel(g, (static_cast<double>(plane) - r.kw[j]) / h) : 1.f;
    float f = 0.f;
    if (lane < W) f = es_kernel(g, (lane - r.du[j]) / h);
    else if (lane < 2 * W) f = es_kernel(g, (lane - W - r.dv[j]) / h) * fw;
    const int iu = r.iu[j], iv = r.iv[j];
    float2 value[IMAGES];
#pragma unroll
    for (int i = 0; i < IMAGES; ++i) value[i] = r.value[i][j];
#pragma unroll
    for (int base = 0; base < W * W; base += 32) {
      const int c = base + lane;
      const int a = c % W, b = min(c / W, W - 1);
      const float fa = __shfl_sync(0xffffffffu, f, a), fb = __shfl_sync(0xffffffffu, f, W + b);
      const float k = fa * fb;
      if (c >= W * W || k == 0.f) continue;
      // iu ∈ [−W/2, nu] and nu ≥ 2W: one wrap per axis (as degrid_samples).
      int gu = iu + a, gv = iv + b;
      gu = gu < 0 ? gu + g.nu : (gu >= g.nu ? gu - g.nu : gu);
      gv = gv < 0 ? gv + g.nv : (gv >= g.nv ? gv - g.nv : gv);
      const std::size_t cell = static_cast<std::size_t>(gv) * static_cast<std::size_t>(g.nu) + static_cast<std::size_t>(gu);
#pragma unroll
      for (int i = 0; i < IMAGES; ++i) add_to_grid(grids + i * cells + cell, make_float2(value[i].x * k, value[i].y * k));
    }
  }
}

template <int W, int IMAGES>
__global__ void __launch_bounds__(kGridThreads)
    grid_tiles(DeviceGeometry g, Records r, int plane, std::uint32_t sub_begin, std::uint32_t sub_end, float2* grids) {
  constexpr int T = kTile + W;  // footprints of a tile's samples lie in [32·tile − W/2, 32·tile + 31 + W/2]
  __shared__ float2 tile[IMAGES][T * T];
  const std::size_t cells = static_cast<std::size_t>(g.nu) * static_cast<std::size_t>(g.nv);
  const std::uint64_t mask_u = (std::uint64_t{1} << g.tile_bits_u) - 1, mask_v = (std::uint64_t{1} << g.tile_bits_v) - 1;
  for (std::uint32_t s = sub_begin + blockIdx.x; s < sub_end; s += gridDim.x) {
    const std::uint32_t j0 = r.sub_start[s], j1 = r.sub_start[s + 1];
    if ((j1 - j0) * W * W <= T * T) {  // the same for the whole block
      grid_direct<W, IMAGES>(g, r, plane, j0, j1, cells, grids);
      continue;
    }
    for (int c = threadIdx.x; c < T * T; c += blockDim.x)
#pragma unroll
      for (int i = 0; i < IMAGES; ++i) tile[i][c] = make_float2(0.f, 0.f);
    __syncthreads();
    const std::uint64_t key = r.key[j0];
    const int u0 = static_cast<int>(key & mask_u) * kTile - W / 2;
    const int v0 = static_cast<int>((key >> g.tile_bits_u) & mask_v) * kTile - W / 2;
    for (std::uint32_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
      float fu[W], fv[W];
      footprint<W>(g, r, j, plane, fu, fv);
      const int lu = r.iu[j] - u0, lv = r.iv[j] - v0;  // in [0, 32]: the footprint fits the tile
      float2 value[IMAGES];
#pragma unroll
      for (int i = 0; i < IMAGES; ++i) value[i] = r.value[i][j];
#pragma unroll
      for (int b = 0; b < W; ++b) {
        const int row = (lv + b) * T + lu;
#pragma unroll
        for (int a = 0; a < W; ++a) {
          const float f = fu[a] * fv[b];
#pragma unroll
          for (int i = 0; i < IMAGES; ++i) {
            atomicAdd(&tile[i][row + a].x, value[i].x * f);
            atomicAdd(&tile[i][row + a].y, value[i].y * f);
          }
        }
      }
    }
    __syncthreads();
    for (int c = threadIdx.x; c < T * T; c += blockDim.x) {
      int gu = (u0 + c % T) % g.nu, gv = (v0 + c / T) % g.nv;
      if (gu < 0) gu += g.nu;
      if (gv < 0) gv += g.nv;
      const std::size_t cell = static_cast<std::size_t>(gv) * static_cast<std::size_t>(g.nu) + static_cast<std::size_t>(gu);
#pragma unroll
      for (int i = 0; i < IMAGES; ++i) {
        const float2 v = tile[i][c];
        if (v.x != 0.f || v.y != 0.f) add_to_grid(grids + i * cells + cell, v);
      }
    }
    __syncthreads();  // the tile is zeroed again for the next subproblem
  }
}

template <int W>
__global__ void __launch_bounds__(kDegridThreads)
    degrid_samples(DeviceGeometry g, Records r, int plane, std::uint32_t begin, std::uint32_t end, const float2* grid,
                   double2* acc) {
  for (std::uint32_t j = begin + blockIdx.x * blockDim.x + threadIdx.x; j < end; j += gridDim.x * blockDim.x) {
    float fu[W], fv[W];
    footprint<W>(g, r, j, plane, fu, fv);
    // iu ∈ [−W/2, nu] and nu ≥ 2W, so one wrap brings every footprint cell into the grid.
    int cu[W];
#pragma unroll
    for (int a = 0; a < W; ++a) {
      const int c = r.iu[j] + a;
      cu[a] = c < 0 ? c + g.nu : (c >= g.nu ? c - g.nu : c);
    }
    const int iv = r.iv[j];
    double sx = 0, sy = 0;
#pragma unroll
    for (int b = 0; b < W; ++b) {
      int c = iv + b;
      c = c < 0 ? c + g.nv : (c >= g.nv ? c - g.nv : c);
      const float2* row = grid + static_cast<std::size_t>(c) * static_cast<std::size_t>(g.nu);
      float rx = 0.f, ry = 0.f;
#pragma unroll
      for (int a = 0; a < W; ++a) {
        const float2 v = row[cu[a]];
        rx += v.x * fu[a];
        ry += v.y * fu[a];
      }
      sx += static_cast<double>(rx) * fv[b];
      sy += static_cast<double>(ry) * fv[b];
    }
    double2 a = acc[j];
    acc[j] = make_double2(a.x + sx, a.y + sy);
  }
}

template <int W>
void launch_grid(cudaStream_t stream, const DeviceGeometry& g, const Records& r, int images, int plane,
                 std::uint32_t sub_begin, std::uint32_t sub_end, float2* grids) {
  const unsigned blocks = std::min<std::uint32_t>(sub_end - sub_begin, 1u << 30);
  if (images == 1)
    grid_tiles<W, 1><<<blocks, kGridThreads, 0, stream>>>(g, r, plane, sub_begin, sub_end, grids);
  else
    grid_tiles<W, 2><<<blocks, kGridThreads, 0, stream>>>(g, r, plane, sub_begin, sub_end, grids);
  GPUCLEAN_CHECK_LAUNCH();
}

template <int W>
void launch_degrid(cudaStream_t stream, const DeviceGeometry& g, const Records& r, int plane, std::uint32_t begin,
                   std::uint32_t end, const float2* grid, double2* acc) {
  const unsigned blocks = std::min<std::uint32_t>((end - begin + kDegridThreads - 1) / kDegridThreads, 1u << 20);
  degrid_samples<W><<<blocks, kDegridThreads, 0, stream>>>(g, r, plane, begin, end, grid, acc);
  GPUCLEAN_CHECK_LAUNCH();
}

[[noreturn]] void unsupported(int support) {
  throw std::invalid_argument("the GPU gridder has no kernels for support " + std::to_string(support));
}

}  // namespace

void grid_plane(cudaStream_t stream, const DeviceGeometry& g, const Records& r, int images, int plane,
                std::uint32_t sub_begin, std::uint32_t sub_end, float2* grids) {
  if (sub_begin >= sub_end) return;
  if (images != 1 && images != 2) throw std::invalid_argument("grid_plane: 1 or 2 images");
  switch (g.support) {
    case 4: return launch_grid<4>(stream, g, r, images, plane, sub_begin, sub_end, grids);
    case 5: return launch_grid<5>(stream, g, r, images, plane, sub_begin, sub_end, grids);
    case 6: return launch_grid<6>(stream, g, r, images, plane, sub_begin, sub_end, grids);
    case 7: return launch_grid<7>(stream, g, r, images, plane, sub_begin, sub_end, grids);
    case 8: return launch_grid<8>(stream, g, r, images, plane, sub_begin, sub_end, grids);
    default: unsupported(g.support);
  }
}

void degrid_plane(cudaStream_t stream, const DeviceGeometry& g, const Records& r, int plane, std::uint32_t begin,
                  std::uint32_t end, const float2* grid, double2* acc) {
  if (begin >= end) return;
  switch (g.support) {
    case 4: return launch_degrid<4>(stream, g, r, plane, begin, end, grid, acc);
    case 5: return launch_degrid<5>(stream, g, r, plane, begin, end, grid, acc);
    case 6: return launch_degrid<6>(stream, g, r, plane, begin, end, grid, acc);
    case 7: return launch_degrid<7>(stream, g, r, plane, begin, end, grid, acc);
    case 8: return launch_degrid<8>(stream, g, r, plane, begin, end, grid, acc);
    default: unsupported(g.support);
  }
}

}  // namespace gpuclean::imaging::gpu

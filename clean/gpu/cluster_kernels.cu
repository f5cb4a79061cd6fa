// Kernels of the minor cycle's cluster rule, grouping and merge (cluster_kernels.hpp).

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>

#include "clean/gpu/cluster_kernels.hpp"
#include "clean/packed_peak.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::clean::gpu {
namespace {

constexpr int kThreads = 256;
constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>((n + kThreads - 1) / kThreads, 65535)));
}

#define GRID_STRIDE(i, n)                                                                  \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

// Union-find with hooking of the larger root under the smaller by compare-and-swap (no cycles:
// a root only ever points to a smaller index). Reads are volatile: other threads hook roots.
__device__ std::uint32_t uf_find(const std::uint32_t* parent, std::uint32_t x) {
  const volatile std::uint32_t* p = parent;
  std::uint32_t y = p[x];
  while (y != x) {
    x = y;
    y = p[x];
  }
  return x;
}

__device__ void uf_unite(std::uint32_t* parent, std::uint32_t a, std::uint32_t b) {
  while (true) {
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a == b) return;
    if (a > b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t old = atomicCAS(&parent[b], b, a);
    if (old == b) return;
    b = old;  // b was hooked meanwhile: go on from where it points now
  }
}

__global__ void cells_init_kernel(uint4* box, std::uint32_t* parent, std::uint32_t cells) {
  GRID_STRIDE(c, cells) {
    box[c] = make_uint4(kEmpty, kEmpty, 0u, 0u);  // min x, min y, max x, max y
    parent[c] = static_cast<std::uint32_t>(c);
  }
}

__global__ void cells_box_kernel(const std::uint32_t* pixels, std::uint32_t count, std::uint32_t width, CellGrid g,
                                 uint4* box, std::uint32_t* member_cell) {
  GRID_STRIDE(i, count) {
    const std::uint32_t p = pixels[i], x = p % width, y = p / width;
    const std::uint32_t c = (y / g.cell) * g.gx + x / g.cell;
    member_cell[i] = c;
    atomicMin(&box[c].x, x);
    atomicMin(&box[c].y, y);
    atomicMax(&box[c].z, x);
    atomicMax(&box[c].w, y);
  }
}

// Joins 8-adjacent non-empty cells whose boxes come within the patch half-width in both axes
// (forward neighbours only: each pair once).
__global__ void cells_union_kernel(const uint4* box, std::uint32_t* parent, CellGrid g, int hw) {
  GRID_STRIDE(c, static_cast<std::size_t>(g.gx) * g.gy) {
    const uint4 a = box[c];
    if (a.x == kEmpty) continue;
    const int cx = static_cast<int>(c % g.gx), cy = static_cast<int>(c / g.gx);
    const int off[4][2] = {{1, 0}, {-1, 1}, {0, 1}, {1, 1}};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int nx = cx + off[k][0], ny = cy + off[k][1];
      if (nx < 0 || ny < 0 || nx >= static_cast<int>(g.gx) || ny >= static_cast<int>(g.gy)) continue;
      const std::uint32_t d = static_cast<std::uint32_t>(ny) * g.gx + static_cast<std::uint32_t>(nx);
      const uint4 b = box[d];
      if (b.x == kEmpty) continue;
      const long long gap_x = max(0ll, max(static_cast<long long>(b.x) - a.z, static_cast<long long>(a.x) - b.z));
      const long long gap_y = max(0ll, max(static_cast<long long>(b.y) - a.w, static_cast<long long>(a.y) - b.w));
      if (gap_x <= hw && gap_y <= hw) uf_unite(parent, static_cast<std::uint32_t>(c), d);
    }
  }
}

__global__ void cells_label_kernel(const std::uint32_t* member_cell, std::uint32_t count, const std::uint32_t* parent,
                                   std::uint32_t* labels, std::uint32_t* idx) {
  GRID_STRIDE(i, count) {
    labels[i] = uf_find(parent, member_cell[i]);
    idx[i] = static_cast<std::uint32_t>(i);
  }
}

__device__ __forceinline__ std::uint32_t xy_of(std::uint32_t p, std::uint32_t width) {
  return ((p / width) << 16) | (p % width);
}

__global__ void group_kernel(const std::uint32_t* label, const std::uint32_t* idx, std::uint32_t count,
                             const float* values, const std::uint32_t* pixels, std::uint32_t width, float* g_val,
                             std::uint32_t* g_xy, std::uint32_t* end_by_cell) {
  GRID_STRIDE(i, count) {
    const std::uint32_t m = idx[i];
    g_val[i] = values[m];
    g_xy[i] = xy_of(pixels[m], width);
    if (i + 1 == count || label[i + 1] != label[i]) end_by_cell[label[i]] = static_cast<std::uint32_t>(i + 1);
  }
}

__global__ void list_kernel(const std::uint32_t* label, std::uint32_t count, const std::uint32_t* end_by_cell,
                            ClusterRange* big, ClusterRange* small, MinorCounters* counters) {
  GRID_STRIDE(i, count) {
    if (i > 0 && label[i - 1] == label[i]) continue;
    const std::uint32_t begin = static_cast<std::uint32_t>(i), end = end_by_cell[label[i]];
    atomicMax(&counters->widest, end - begin);
    if (end - begin > kWarpTeamMax) big[atomicAdd(&counters->n_big, 1u)] = make_uint2(begin, end);
    else small[atomicAdd(&counters->n_small, 1u)] = make_uint2(begin, end);
  }
}

__global__ void single_kernel(std::uint32_t count, const float* values, const std::uint32_t* pixels, std::uint32_t width,
                              float* g_val, std::uint32_t* g_xy, ClusterRange* big, ClusterRange* small,
                              MinorCounters* counters) {
  GRID_STRIDE(i, count) {
    g_val[i] = values[i];
    g_xy[i] = xy_of(pixels[i], width);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && count > 0) {
    counters->widest = count;
    if (count > kWarpTeamMax) {
      big[0] = make_uint2(0u, count);
      counters->n_big = 1;
    } else {
      small[0] = make_uint2(0u, count);
      counters->n_small = 1;
    }
  }
}

__global__ void iota_kernel(std::uint32_t* out, std::size_t count) {
  GRID_STRIDE(i, count) out[i] = static_cast<std::uint32_t>(i);
}

__global__ void emit_kernel(const std::uint32_t* order, std::uint32_t made, const std::uint32_t* rec_pixel,
                            const float* rec_flux, float flux_divisor, std::uint32_t* comp_pixels,
                            float* comp_fluxes, std::uint32_t* pixel_of_rank, std::uint32_t* rank) {
  GRID_STRIDE(r, made) {
    const std::uint32_t k = order ? order[r] : static_cast<std::uint32_t>(r);
    const std::uint32_t p = rec_pixel[k];
    comp_pixels[r] = p;
    comp_fluxes[r] = rec_flux[k] / flux_divisor;  // exact for the delta scale's 1
    pixel_of_rank[r] = p;
    rank[r] = static_cast<std::uint32_t>(r);
  }
}

// The largest key of the active set (a NaN is never a key), for the budget cutoff's histogram.
__global__ void peak_key_kernel(const float* values, std::uint32_t count, bool abs_key, MinorCounters* counters) {
  std::uint32_t best = 0;
  GRID_STRIDE(i, count) {
    const float v = values[i];
    if (v == v) best = max(best, ordered_bits((abs_key ? fabsf(v) : v) + 0.0f));
  }
  best = __reduce_max_sync(0xffffffffu, best);
  if ((threadIdx.x & 31) == 0 && best != 0) atomicMax(&counters->peak_key, best);
}

// One thread per pixel run sums it in rank order, like the CPU's delta[i] += flux.
__global__ void sum_kernel(const std::uint32_t* pixel, const std::uint32_t* rank, std::uint32_t made,
                           const float* comp_fluxes, float* delta, float* model) {
  GRID_STRIDE(i, made) {
    const std::uint32_t p = pixel[i];
    if (i > 0 && pixel[i - 1] == p) continue;
    float sum = 0.0f;
    for (std::size_t j = i; j < made && pixel[j] == p; ++j) sum += comp_fluxes[rank[j]];
    delta[p] = sum;
    if (model) model[p] += sum;
  }
}

}  // namespace

void label_clusters(cudaStream_t s, const std::uint32_t* pixels, std::uint32_t count, std::uint32_t width,
                    const CellGrid& grid, int half_width, uint4* box, std::uint32_t* parent,
                    std::uint32_t* member_cell, std::uint32_t* labels, std::uint32_t* idx) {
  cells_init_kernel<<<blocks_for(grid.cells()), kThreads, 0, s>>>(box, parent, grid.cells());
  GPUCLEAN_CHECK_LAUNCH();
  if (count == 0) return;
  cells_box_kernel<<<blocks_for(count), kThreads, 0, s>>>(pixels, count, width, grid, box, member_cell);
  GPUCLEAN_CHECK_LAUNCH();
  cells_union_kernel<<<blocks_for(grid.cells()), kThreads, 0, s>>>(box, parent, grid, half_width);
  GPUCLEAN_CHECK_LAUNCH();
  cells_label_kernel<<<blocks_for(count), kThreads, 0, s>>>(member_cell, count, parent, labels, idx);
  GPUCLEAN_CHECK_LAUNCH();
}

void group_clusters(cudaStream_t s, const std::uint32_t* label_sorted, const std::uint32_t* idx_sorted,
                    std::uint32_t count, const float* values, const std::uint32_t* pixels, std::uint32_t width,
                    float* grouped_values, std::uint32_t* grouped_xy, std::uint32_t* end_by_cell, ClusterRange* big,
                    ClusterRange* small, MinorCounters* counters) {
  if (count == 0) return;
  group_kernel<<<blocks_for(count), kThreads, 0, s>>>(label_sorted, idx_sorted, count, values, pixels, width,
                                                        grouped_values, grouped_xy, end_by_cell);
  GPUCLEAN_CHECK_LAUNCH();
  list_kernel<<<blocks_for(count), kThreads, 0, s>>>(label_sorted, count, end_by_cell, big, small, counters);
  GPUCLEAN_CHECK_LAUNCH();
}

void group_single(cudaStream_t s, std::uint32_t count, const float* values, const std::uint32_t* pixels,
                  std::uint32_t width, float* grouped_values, std::uint32_t* grouped_xy, ClusterRange* big,
                  ClusterRange* small, MinorCounters* counters) {
  if (count == 0) return;
  single_kernel<<<blocks_for(count), kThreads, 0, s>>>(count, values, pixels, width, grouped_values, grouped_xy, big,
                                                         small, counters);
  GPUCLEAN_CHECK_LAUNCH();
}

void peak_key(cudaStream_t s, const float* values, std::uint32_t count, bool abs_key, MinorCounters* counters) {
  if (count == 0) return;
  peak_key_kernel<<<blocks_for(count), kThreads, 0, s>>>(values, count, abs_key, counters);
  GPUCLEAN_CHECK_LAUNCH();
}

void iota(cudaStream_t s, std::uint32_t* out, std::size_t count) {
  if (count == 0) return;
  iota_kernel<<<blocks_for(count), kThreads, 0, s>>>(out, count);
  GPUCLEAN_CHECK_LAUNCH();
}

void emit_components(cudaStream_t s, const std::uint32_t* order, std::uint32_t made, const std::uint32_t* rec_pixel,
                     const float* rec_flux, float flux_divisor, std::uint32_t* comp_pixels, float* comp_fluxes,
                     std::uint32_t* pixel_of_rank, std::uint32_t* rank) {
  if (made == 0) return;
  emit_kernel<<<blocks_for(made), kThreads, 0, s>>>(order, made, rec_pixel, rec_flux, flux_divisor, comp_pixels,
                                                      comp_fluxes, pixel_of_rank, rank);
  GPUCLEAN_CHECK_LAUNCH();
}

void sum_per_pixel(cudaStream_t s, const std::uint32_t* pixel_sorted, const std::uint32_t* rank_sorted,
                   std::uint32_t made, const float* comp_fluxes, float* delta, float* model) {
  if (made == 0) return;
  sum_kernel<<<blocks_for(made), kThreads, 0, s>>>(pixel_sorted, rank_sorted, made, comp_fluxes, delta, model);
  GPUCLEAN_CHECK_LAUNCH();
}

std::size_t sort_pairs_u32_temp_bytes(std::size_t count) {
  std::size_t bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                                    static_cast<std::uint32_t*>(nullptr),
                                                    static_cast<const std::uint32_t*>(nullptr),
                                                    static_cast<std::uint32_t*>(nullptr), count));
  return bytes;
}

void sort_pairs_u32(cudaStream_t s, void* temp, std::size_t temp_bytes, const std::uint32_t* keys_in,
                    std::uint32_t* keys_out, const std::uint32_t* values_in, std::uint32_t* values_out,
                    std::size_t count, int end_bit) {
  if (count == 0) return;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, count,
                                                    0, end_bit, s));
}

std::size_t sort_pairs_u64_descending_temp_bytes(std::size_t count) {
  std::size_t bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairsDescending(
      nullptr, bytes, static_cast<const unsigned long long*>(nullptr), static_cast<unsigned long long*>(nullptr),
      static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), count));
  return bytes;
}

void sort_pairs_u64_descending(cudaStream_t s, void* temp, std::size_t temp_bytes, const unsigned long long* keys_in,
                               unsigned long long* keys_out, const std::uint32_t* values_in,
                               std::uint32_t* values_out, std::size_t count) {
  if (count == 0) return;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out, values_in,
                                                              values_out, count, 0, 64, s));
}

}  // namespace gpuclean::clean::gpu

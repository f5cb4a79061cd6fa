#pragma once
// The minor cycle's steps around the team kernel (kernels in cluster_kernels.cu): the cluster
// rule of interaction_clusters.hpp on the device (cells, bounding boxes, union-find), the
// grouping of members by cluster, and the merge of the clusters' records into the component
// list, the delta image and the model. Host orchestration: minor_engine.cpp.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "clean/gpu/minor_types.hpp"

namespace gpuclean::clean::gpu {

struct CellGrid {
  std::uint32_t cell = 1, gx = 1, gy = 1;
  std::uint32_t cells() const { return gx * gy; }
};

/// Labels each member (pixels[0, count), any order) with its cluster's root cell, and writes
/// idx[i] = i, ready for a sort by label. `box` (4 words per cell), `parent` and `member_cell`
/// are scratch.
void label_clusters(cudaStream_t s, const std::uint32_t* pixels, std::uint32_t count, std::uint32_t width,
                    const CellGrid& grid, int half_width, uint4* box, std::uint32_t* parent,
                    std::uint32_t* member_cell, std::uint32_t* labels, std::uint32_t* idx);

/// From members sorted by label (label_sorted, idx_sorted: positions into values/pixels), the
/// grouped arrays (values, y << 16 | x) and the cluster lists: clusters above kWarpTeamMax
/// members go to `big`, the others to `small`, counted in counters->n_big / n_small.
/// `end_by_cell` is scratch of one word per cell.
void group_clusters(cudaStream_t s, const std::uint32_t* label_sorted, const std::uint32_t* idx_sorted,
                    std::uint32_t count, const float* values, const std::uint32_t* pixels, std::uint32_t width,
                    float* grouped_values, std::uint32_t* grouped_xy, std::uint32_t* end_by_cell, ClusterRange* big,
                    ClusterRange* small, MinorCounters* counters);

/// All members as one cluster (in pixel order, as given).
void group_single(cudaStream_t s, std::uint32_t count, const float* values, const std::uint32_t* pixels,
                  std::uint32_t width, float* grouped_values, std::uint32_t* grouped_xy, ClusterRange* big,
                  ClusterRange* small, MinorCounters* counters);

/// out[i] = i, i < count.
/// counters->peak_key = max(counters->peak_key, ordered bits of the largest key of `values`):
/// |v| when abs_key, else v; NaNs skipped. The budget cutoff's histogram hangs from it.
void peak_key(cudaStream_t s, const float* values, std::uint32_t count, bool abs_key, MinorCounters* counters);

void iota(cudaStream_t s, std::uint32_t* out, std::size_t count);

/// The first `made` records in merged order (order[r], or r itself when order is null) become
/// components comp_*[r], their fluxes divided by `flux_divisor` (a scale's PSF peak; 1 for the
/// delta scale); pixel_of_rank[r] and rank[r] = r prepare the per-pixel sums.
void emit_components(cudaStream_t s, const std::uint32_t* order, std::uint32_t made, const std::uint32_t* rec_pixel,
                     const float* rec_flux, float flux_divisor, std::uint32_t* comp_pixels, float* comp_fluxes,
                     std::uint32_t* pixel_of_rank, std::uint32_t* rank);

/// With components sorted by pixel (ranks ascending within a pixel): delta[p] = the sum of the
/// pixel's fluxes in component order (as the CPU sums them), model[p] += that sum (model may be
/// null: a multiscale cycle adds its kernel-shaped components to the model itself).
void sum_per_pixel(cudaStream_t s, const std::uint32_t* pixel_sorted, const std::uint32_t* rank_sorted,
                   std::uint32_t made, const float* comp_fluxes, float* delta, float* model);

/// CUB radix sorts of (key, value) pairs: labels or pixels ascending on their low `end_bit`
/// bits, and the records' merge keys descending. Both stable.
std::size_t sort_pairs_u32_temp_bytes(std::size_t count);
void sort_pairs_u32(cudaStream_t s, void* temp, std::size_t temp_bytes, const std::uint32_t* keys_in,
                    std::uint32_t* keys_out, const std::uint32_t* values_in, std::uint32_t* values_out,
                    std::size_t count, int end_bit);
std::size_t sort_pairs_u64_descending_temp_bytes(std::size_t count);
void sort_pairs_u64_descending(cudaStream_t s, void* temp, std::size_t temp_bytes, const unsigned long long* keys_in,
                               unsigned long long* keys_out, const std::uint32_t* values_in,
                               std::uint32_t* values_out, std::size_t count);

}  // namespace gpuclean::clean::gpu

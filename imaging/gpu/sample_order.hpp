#pragma once
// The host half of streaming (imaging-plan.md §4.6): the samples in the order of their first
// plane, and the chunks of that order the device takes one at a time. Plain C++, no CUDA.

#include <cstddef>
#include <span>
#include <vector>

#include "imaging/grid_plan.hpp"

namespace gpuclean::imaging::gpu {

/// Planes a sample touches: W with w-stacking, 1 without.
int plane_support(const GridPlan& plan);

/// A sample's first plane p0 = max(0, ⌈Kw − W/2⌉), Kw = (|w| − w0)/dw, exactly as invert_cpu
/// computes it (0 without w-stacking). Throws std::invalid_argument, with invert_cpu's message,
/// when |w| lies outside the plan (or is not a number).
int first_plane(const GridPlan& plan, double w);

/// The samples to grid, stably sorted by first plane (a counting sort: only w is read).
struct SampleOrder {
  std::vector<std::size_t> index;         ///< positions in the caller's arrays
  std::vector<std::size_t> plane_offset;  ///< index[plane_offset[p] ..< plane_offset[p + 1]] start at plane p
  std::size_t size() const { return index.size(); }
  int first_plane_at(std::size_t position) const;  ///< p0 of index[position]
};

/// `weight` empty: every sample; otherwise samples of weight 0 are left out.
SampleOrder order_by_first_plane(const GridPlan& plan, std::span<const double> w, std::span<const float> weight);

/// A contiguous run of the order and the planes it sweeps: [first_plane, last_plane] =
/// [p0 of its first sample, min(planes − 1, p0 of its last + support − 1)].
struct Chunk {
  std::size_t begin = 0, end = 0;
  int first_plane = 0, last_plane = 0;
  std::size_t size() const { return end - begin; }
};

/// Consecutive chunks of at most `capacity` (> 0) samples covering the order.
std::vector<Chunk> make_chunks(const GridPlan& plan, const SampleOrder& order, std::size_t capacity);

}  // namespace gpuclean::imaging::gpu

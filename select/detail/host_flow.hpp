#pragma once
// The host-driven flow that the bucketed and cutting-plane backends and the randomized
// backend's host path share: a segment pass saves the keys that are surely selected to A and
// the keys around the target to B, the host reads the counts, sorts B and chooses in it, or
// takes the exact radix path when B cannot hold them. The backends differ only in how they
// choose the pass's bounds; what is the same (the buffers' layout, the pass with its counts
// read back, the exact fallbacks, the output) is here.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "select/detail/arena.hpp"
#include "select/detail/engine.hpp"
#include "select/selector.hpp"

namespace gpuclean::select::detail {

/// The device buffers of the flow. A backend's plan derives from it and adds its own (samples,
/// oracles, a projection), taking them from the same arena in its own order.
struct FilterBuffers {
  std::uint32_t* bounds = nullptr;
  std::uint8_t* regions = nullptr;        ///< null when the passes use inline regions only
  unsigned long long* counts = nullptr;   ///< the pass's segment counts
  unsigned long long* fill = nullptr;     ///< the pass's appends to A and to B
  std::uint64_t* buf_a = nullptr;         ///< A: composites all selected (top-k: capacity k)
  std::uint64_t* buf_b = nullptr;         ///< B: composites around the target (capacity cap_b)
  std::uint64_t* sorted_b = nullptr;
  std::uint64_t* final_sorted = nullptr;  ///< A and B sorted together, for a sorted output
  void* b_temp = nullptr;
  void* final_temp = nullptr;
  std::size_t b_temp_bytes = 0, final_temp_bytes = 0, cap_b = 0;
  std::byte* scratch = nullptr;  ///< the exact radix path's scratch, and small readbacks'
  std::size_t scratch_bytes = 0;
};

/// Lays out a call's workspace: `plan(arena)` runs over a measuring arena for the size, then
/// over `ws` grown to that size; returns that plan, and records the size in `stats`.
template <class PlanFn>
auto lay_out(Workspace& ws, SelectStats& stats, PlanFn plan) {
  Arena sizing;
  plan(sizing);
  stats.scratch_bytes = sizing.used();
  Arena arena = arena_for(ws, sizing.used());
  return plan(arena);
}

/// Takes the pass's buffers: room for `max_bounds` bounds, their segments' regions (when
/// `regions`) and counts, and the two fill counters.
void take_pass_buffers(Arena& a, FilterBuffers& f, std::size_t max_bounds, bool regions);
/// Takes B (cap_b composites) and its sort's scratch.
void take_b_buffers(Arena& a, FilterBuffers& f, std::size_t cap_b);
/// Takes A (k composites), then B, then the final sort of k composites.
void take_ab_buffers(Arena& a, FilterBuffers& f, std::size_t k, std::size_t cap_b);
/// Takes `bytes` of scratch.
void take_scratch(Arena& a, FilterBuffers& f, std::size_t bytes);

/// A segment pass over in[0, n) into f's counts, A (room for cap_a) and B; the caller sets the
/// bounds (or the projection), the regions and the oracles.
SegmentPass filter_pass(const FilterBuffers& f, const float* in, std::size_t n, KeyMode mode,
                        unsigned long long cap_a);
/// The pass's first `count` segment counts, read back (synchronizes).
std::vector<unsigned long long> read_counts(cudaStream_t stream, const unsigned long long* d_counts,
                                            std::size_t count);
/// Runs `pass`, counts it in `stats`, and reads back its first `count` segment counts.
std::vector<unsigned long long> run_segment_pass(cudaStream_t stream, const SegmentPass& pass, std::size_t count,
                                                 SelectStats& stats);

/// The exact top-k when B cannot hold the target's keys: the k-th key (`known`, or found by
/// radix passes), then every key below it and its lowest-index ties, k composites to A.
void exact_top_k(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, std::size_t k,
                 std::optional<Threshold> known, const FilterBuffers& f, SelectStats& stats);
/// The exact key of 1-based rank k, by radix passes over the input.
std::uint32_t exact_rank_key(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode,
                             unsigned long long k, const FilterBuffers& f, SelectStats& stats);

/// The keys at positions `pos` of a sorted device array (composites when `composites`, else
/// plain keys), through `scratch` (12 bytes a position). Synchronizes unless `pos` is empty.
std::vector<std::uint32_t> keys_at(cudaStream_t stream, const void* sorted, bool composites,
                                   const std::vector<unsigned long long>& pos, std::byte* scratch);

/// Writes the selection, A's na composites then b[0, nb), as (value, index) pairs; when
/// `sorted`, A and b are first sorted together (b is appended to A). Synchronizes.
void write_selection(cudaStream_t stream, const float* in, const FilterBuffers& f, std::size_t na,
                     const std::uint64_t* b, std::size_t nb, bool sorted, float* out_values,
                     std::uint32_t* out_indices);

/// Every order-statistics call answers NaN where it finds nothing (a rank beyond the valid
/// keys). Returns false when there is nothing to select.
bool start_order_statistics(std::size_t n, const std::vector<std::size_t>& ranks, float* h_out);

}  // namespace gpuclean::select::detail

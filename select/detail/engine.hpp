#pragma once
// The GPU building blocks every backend is made of (kernels live in engine.cu). Keys are ranking
// keys (rank_key.hpp): smaller is better, kInvalidKey (NaN) never selected.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "select/detail/arena.hpp"
#include "select/detail/rank_key.hpp"

namespace gpuclean::select::detail {

/// Keys of `count` elements drawn uniformly with replacement (counter-based hash of seed, j).
void sample_keys(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, std::uint64_t seed,
                 std::uint32_t* out, std::size_t count);

/// Ascending sort of keys, out of place: a one-block bitonic sort up to kBitonicMax composites,
/// a CUB radix sort beyond. `bits` limits the sort to the low bits of the
/// 64-bit composite when only part of it matters (64 = all, 32 = the key half only).
std::size_t sort_temp_bytes_u32(std::size_t count);
std::size_t sort_temp_bytes_u64(std::size_t count);
void sort_u32(cudaStream_t stream, void* temp, std::size_t temp_bytes, const std::uint32_t* in, std::uint32_t* out,
              std::size_t count);
void sort_u64(cudaStream_t stream, void* temp, std::size_t temp_bytes, const std::uint64_t* in, std::uint64_t* out,
              std::size_t count, int begin_bit = 0);

/// Where the elements of a segment go in a segment pass.
enum Region : std::uint8_t { kRegionNone = 0, kRegionA = 1, kRegionB = 2 };

/// The most bounds a segment pass takes (segments = bounds + 1).
inline constexpr int kMaxBounds = 8192;

/// bucketMultiSelect's bucketizer (Blanchard et al.): kernel-density intervals from a sample,
/// each split into `per_interval` equal-width buckets; a key goes to interval i (the last whose
/// lower bound is <= key, by a short search) and bucket i * per_interval +
/// min(per_interval - 1, floor((key - lo[i]) * slope[i])). Monotone in the key. NaN keys go to
/// the last bucket, intervals * per_interval.
inline constexpr int kMaxIntervals = 64;
struct Projection {
  int intervals = 0;
  int per_interval = 0;
  std::uint32_t lo[kMaxIntervals] = {};
  float slope[kMaxIntervals] = {};
  int buckets() const { return intervals * per_interval + 1; }
};

/// One pass over the input: each element's key falls into segment s = #(bounds <= key) of the
/// sorted, strictly increasing bounds; the pass counts every segment (NaN included, in the
/// segment above kInvalidKey's bound), and appends the (key, index) composite of elements whose
/// segment maps to region A or B to that region's buffer while there is room. A fill counter
/// is exact while it stays within its capacity and ends above it when the buffer overflowed
/// (warps stop appending once they see that). Optionally writes each
/// element's segment (an oracle, SampleSelect's memo) to `oracles`.
struct SegmentPass {
  const float* in = nullptr;
  std::size_t n = 0;
  KeyMode mode = KeyMode::kLargest;
  const std::uint32_t* bounds = nullptr;  ///< device
  int n_bounds = 0;
  const std::uint8_t* regions = nullptr;  ///< device, n_bounds + 1 entries, or null: see inline_regions
  std::uint8_t inline_regions[4] = {kRegionNone, kRegionNone, kRegionNone, kRegionNone};  ///< when regions is null
  unsigned long long* counts = nullptr;   ///< device, n_bounds + 1 entries; zeroed by segment_pass
  std::uint64_t* buf_a = nullptr;
  unsigned long long cap_a = 0;
  std::uint64_t* buf_b = nullptr;
  unsigned long long cap_b = 0;
  unsigned long long* fill = nullptr;     ///< device, 2 entries: elements routed to A and to B
  std::uint16_t* oracles = nullptr;       ///< device, n entries, or null
  const Projection* projection = nullptr; ///< device; when set, segments are its buckets (bounds unused)
  int n_projection_buckets = 0;           ///< projection->buckets(), known on the host
};
void segment_pass(cudaStream_t stream, const SegmentPass& pass);

/// One reduction pass for Kelley's cutting-plane method: with the keys read as numbers, the
/// count of keys below t, of keys equal to t, and the sums of (key - t) over keys above t and
/// (t - key) over keys below (NaN excluded); also the count and sum of all valid keys.
struct ObjectiveTerms {
  unsigned long long below = 0, equal = 0, valid = 0;
  double above_sum = 0.0, below_sum = 0.0, total = 0.0;
};
std::size_t objective_bytes();
ObjectiveTerms objective_pass(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, std::uint32_t t,
                              Arena& arena);

/// Filter by oracle: appends the composite of every element whose oracle maps to region B.
void oracle_filter(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, const std::uint16_t* oracles,
                   const std::uint8_t* regions, int n_segments, std::uint64_t* buf_b, unsigned long long cap_b,
                   unsigned long long* fill_b);

/// The exact k-th smallest key (k >= 1) and the number of keys strictly below it, found by four
/// 8-bit radix histogram passes over the whole input (synchronizes after each). When k exceeds
/// the number of keys the result's key is kInvalidKey.
struct Threshold {
  std::uint32_t key = kInvalidKey;
  unsigned long long less = 0;
};
std::size_t radix_threshold_bytes();
Threshold radix_threshold(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, unsigned long long k,
                          Arena& arena);

/// Given the exact k-th key T and the count of keys below it: writes the k composites of the
/// result, every key < T, then the lowest-index (k - less) elements with key == T, in index
/// order. Two passes (tie counts per chunk, then writing).
std::size_t extract_bytes(std::size_t n);
void extract_with_threshold(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, Threshold t,
                            unsigned long long k, std::uint64_t* out, Arena& arena);

/// out[i] = (in[index], index) for the composites a[0, na) then b[0, nb).
void write_top_k(cudaStream_t stream, const float* in, const std::uint64_t* a, std::size_t na, const std::uint64_t* b,
                 std::size_t nb, float* out_values, std::uint32_t* out_indices);

/// out[i] = key of sorted[pos[i]] (composites when `composites`, else plain keys): reads a few
/// positions of a device array without copying the array. `pos` and `out` are device arrays.
void gather_keys(cudaStream_t stream, const void* sorted, bool composites, const unsigned long long* pos,
                 std::size_t count, std::uint32_t* out);

/// Streaming-kernel launch shape for this device.
int streaming_blocks();

}  // namespace gpuclean::select::detail

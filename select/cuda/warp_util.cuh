#pragma once
// Warp-level building blocks shared by the selection kernels and GPU CLEAN's kernels (CUDA only;
// include from .cu files): public, so that clean/gpu needs nothing of select/detail. Every
// function here is a collective: all 32 lanes must call it.

#include <cstdint>

namespace gpuclean::cuda {

inline constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x & 31); }

/// SplitMix64's finalizer: the counter-based hash behind every random sample position, so that a
/// seed draws the same sample in every backend.
__device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Max over the warp of 64-bit values, with two 32-bit reductions: the high words, then the low
/// words of the lanes that hold the largest high word. Every lane gets it.
__device__ __forceinline__ unsigned long long warp_max64(unsigned long long v) {
  const auto hi = static_cast<std::uint32_t>(v >> 32);
  const std::uint32_t top = __reduce_max_sync(kFullMask, hi);
  const std::uint32_t lo = __reduce_max_sync(kFullMask, hi == top ? static_cast<std::uint32_t>(v) : 0u);
  return (static_cast<unsigned long long>(top) << 32) | lo;
}

/// Min over the warp of 64-bit values, as warp_max64.
__device__ __forceinline__ unsigned long long warp_min64(unsigned long long v) {
  const auto hi = static_cast<std::uint32_t>(v >> 32);
  const std::uint32_t least = __reduce_min_sync(kFullMask, hi);
  const std::uint32_t lo = __reduce_min_sync(kFullMask, hi == least ? static_cast<std::uint32_t>(v) : 0xFFFFFFFFu);
  return (static_cast<unsigned long long>(least) << 32) | lo;
}

/// Appends `value` for every lane that wants to, with one atomic per warp. `room` is
/// warp-uniform: once this warp sees the counter pass `cap`, the overflow is on record (the
/// counter exceeds cap) and it stops appending, so data that overflows a buffer (all keys equal)
/// does not serialize every warp on one counter.
__device__ __forceinline__ void warp_append(bool want, std::uint64_t value, std::uint64_t* buf,
                                            unsigned long long cap, unsigned long long* counter, bool& room) {
  const unsigned mask = __ballot_sync(kFullMask, want);
  if (mask == 0 || !room) return;
  const int lane = lane_id();
  const int leader = __ffs(mask) - 1;
  const unsigned count = __popc(mask);
  unsigned long long base = 0;
  if (lane == leader) base = atomicAdd(counter, static_cast<unsigned long long>(count));
  base = __shfl_sync(kFullMask, base, leader);
  room = base + count <= cap;
  if (want) {
    const unsigned long long pos = base + static_cast<unsigned>(__popc(mask & ((1u << lane) - 1u)));
    if (pos < cap) buf[pos] = value;
  }
}

/// Adds one to hist[bin] for every valid lane; a warp whose lanes all hit one bin adds once.
__device__ __forceinline__ void warp_histogram_add(unsigned* hist, int bin, bool valid) {
  const int first = __shfl_sync(kFullMask, bin, 0);
  if (__all_sync(kFullMask, valid && bin == first)) {
    if (lane_id() == 0) atomicAdd(&hist[bin], 32u);
  } else if (valid) {
    atomicAdd(&hist[bin], 1u);
  }
}

}  // namespace gpuclean::cuda

// The selection kernels' own names for them.
namespace gpuclean::select::detail {
using cuda::kFullMask;
using cuda::lane_id;
using cuda::mix64;
using cuda::warp_append;
using cuda::warp_histogram_add;
using cuda::warp_max64;
}  // namespace gpuclean::select::detail

#pragma once
// The randomized backend's device-chained top-k: pivots, one pass, and the finish, all
// decided on the device, with one host synchronization at the end (window_select.cpp launches
// the steps; window_kernels.hpp lists their files).
//
//   pivot   one block: samples S keys, finds the sample's order statistics at the window's ends
//           and centre (radix select over the block, a byte a round), measures the runs of equal keys
//           there, and writes the plan: a normal window [lo, hi], or an equality window on a
//           heavy key v with the parts of the window below and above v.
//   pass    one pass over the input: counts five segments and saves segment 0 (top-k: keys
//           below the window, all selected) to A and the window to B, through per-warp staging
//           in shared memory (one atomic per ~200 appends). With an equality window it also
//           counts v's copies per 512-element tile, so the lowest-index copies can be found
//           later by reading only the tiles that hold them.
//   resolve grid + last block: from the counts, where the k-th key lies (below, in B, on v,
//           above), then a 13-bit digit histogram of B; the last block finds the digit bin
//           that holds it and scans the tiles' tie counts.
//   finish  grid + last block: writes A, the B elements below the bin, and the lowest-index
//           ties; gathers the bin's candidates; the last block selects among them and writes
//           the status and the count to mapped host memory.
//
// When a check fails (the k-th key outside the window, B over its capacity, a bin too large), the
// status says so and the caller runs its exact host-driven path: exactness never depends on
// the sample.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "select/detail/rank_key.hpp"

namespace gpuclean::select::detail {

/// Keys of the chained passes: KeyMode's three orders, in its order.
enum class WindowKey : int { kLargest = 0, kSmallest = 1, kLargestAbs = 2 };

inline WindowKey window_key_of(KeyMode m) { return static_cast<WindowKey>(static_cast<int>(m)); }

enum WindowStatus : std::uint32_t {
  kWindowOk = 0,
  kWindowMissLow = 2,     ///< the target lies below the window
  kWindowMissHigh = 3,    ///< the target lies above the window
  kWindowOverflow = 4,    ///< the window held more keys than B's capacity
  kWindowCandidates = 5,  ///< the final digit bin held more than kWindowMaxCandidates keys
  kWindowNotRun = 0xFFFFFFFFu,
};

inline constexpr int kWindowDigitBits = 13;
inline constexpr int kWindowBins = 1 << kWindowDigitBits;
inline constexpr std::size_t kWindowMaxCandidates = 65536;

/// The window the pivot kernel chose. Segment of a key = #(bound <= key), 0..4.
struct WindowPlan {
  std::uint32_t bound[4];  ///< nondecreasing
  /// Keys below it would be segment 0, only counted. Always 0 (top-k saves segment 0 to A); kept
  /// because the pass kernel's code, registers and one-wave grid depend on reading it.
  std::uint32_t fast_lo;
  std::uint32_t regions;   ///< 2 bits per segment 0..3 (kRegionNone/A/B); segment 4 is never saved
  std::uint32_t tie_key;   ///< v, segment 2, when `equality`
  std::uint32_t b_lo;      ///< keys saved to B lie in [b_lo, b_hi]
  std::uint32_t b_hi;
  std::int32_t equality;   ///< 1: segment 2 is [v, v + 1), counted but not saved
  std::int32_t open_top;   ///< 1: segment 4 holds only invalid keys, so segments 0..3 are the valid keys
  std::int32_t sample_valid;
  std::uint32_t pad;
};

/// Where the target lies and what the finish writes; computed from the pass's counts.
struct WindowResolve {
  std::uint32_t status;
  std::uint32_t select_b;       ///< the need_b smallest of B are found through digit bins
  std::uint32_t emit_all_b;     ///< all of B is selected
  std::int32_t total_bits;      ///< bits of rel
  std::int32_t shift;           ///< final bin: rel >> shift == prefix
  std::uint32_t b_lo;           ///< the smallest key in B: rel = (key - b_lo) << index_bits | index
  unsigned long long prefix;
  unsigned long long a_count, need_b, need_v, total, nb;
  unsigned long long below;   ///< B elements below the final bin
  unsigned long long cand;    ///< B elements in the final bin
  unsigned long long need_c;  ///< of those, how many are selected (the target is the need_c-th)
  unsigned long long chunks;  ///< tie chunks with offsets computed (those below need_v's end)
};

/// Device counters of one chain; the pivot kernel zeroes them.
struct WindowCounters {
  unsigned long long seg[4];   ///< pass: segments 0..3 (segment 4 is n minus these)
  unsigned long long fill[2];  ///< pass: appends to A and B (exact while within capacity)
  unsigned long long out_fill; ///< finish: B elements written below the final bin
  unsigned long long cand_fill;
  unsigned long long final_count;
  unsigned int ticket[2];      ///< last-block tickets: resolve, finish
  unsigned int b_min_inv;      ///< pass: ~(smallest key saved to B), so that zero means none
  unsigned int b_max;          ///< pass: largest key saved to B
  unsigned int hist[kWindowBins];
  WindowResolve res;
};
static_assert(sizeof(WindowCounters) % 8 == 0, "zeroed as 64-bit words");

/// What the host reads after its one synchronization (mapped pinned memory).
struct WindowResult {
  std::uint32_t status;
  unsigned long long count;  ///< elements written
};

/// Tiles of 512 elements over the 16-byte-aligned part of the input, plus one for the tail;
/// chunks of 64 tiles, the unit of the tie extraction's offsets.
std::size_t window_tiles(std::size_t n);
std::size_t window_chunks(std::size_t n);

/// One top-k chain: the k smallest keys, ties by lowest index, written to the outputs. Device
/// buffers come from the caller's workspace; `result` is mapped host memory.
struct WindowChain {
  const float* in = nullptr;
  std::size_t n = 0;
  WindowKey key = WindowKey::kLargestAbs;
  unsigned long long k = 0;  ///< 1 <= k < n
  int samples = 4096;        ///< 4096, 8192 or 16384
  std::uint64_t seed = 0;
  /// Sample ranks of the window's ends and centre (first may be -1 and last == samples: open
  /// ends).
  long long first = -1, centre = 0, last = 0;
  bool allow_equality = true;

  WindowPlan* plan = nullptr;
  WindowCounters* counters = nullptr;
  std::uint64_t* buf_a = nullptr;  ///< capacity k; also the composites of a sorted output
  std::uint64_t* buf_b = nullptr;
  unsigned long long cap_b = 0;
  std::uint64_t* candidates = nullptr;   ///< kWindowMaxCandidates
  std::uint32_t* tile_ties = nullptr;    ///< window_tiles(n), or null: no equality ties to extract
  unsigned long long* chunk_ties = nullptr;  ///< window_chunks(n) entries, with tile_ties

  float* out_values = nullptr;  ///< unsorted output: written by the finish
  std::uint32_t* out_indices = nullptr;
  bool sorted = false;  ///< leave all k composites in buf_a (padded) for a sort instead
  WindowResult* result = nullptr;  ///< mapped host memory
};

/// Grid of the resolve and finish kernels.
int window_grid();

/// Launches the chain on `stream`; nothing is synchronized.
void run_window_chain(cudaStream_t stream, const WindowChain& chain);

/// After run_window_chain with `sorted`: out[i] = (in[index], index) of sorted[i] for
/// i < counters->final_count.
void write_sorted_window(cudaStream_t stream, const float* in, const std::uint64_t* sorted, std::size_t k,
                         const WindowCounters* counters, float* out_values, std::uint32_t* out_indices);

}  // namespace gpuclean::select::detail

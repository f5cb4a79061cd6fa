#pragma once
// The window chain's kernel parameters, launch shapes and typed launchers: the interface between
// its host side (window_select.cpp) and its kernels, one file per step (window_pivot.cu,
// window_pass.cu, window_resolve.cu, window_finish.cu).
//
// Every kernel of the chain either runs a grid-stride loop over a size it reads from the device,
// or is one block; the "last block" of a grid (a ticket counter, Cuda Programming Guide's
// threadFenceReduction) does the small serial steps, so no step waits for the host.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "select/detail/window_select.hpp"

namespace gpuclean::select::detail {

inline constexpr int kPivotThreads = 1024;
inline constexpr int kPassThreads = 256;
inline constexpr int kChainThreads = 512;
inline constexpr int kSmemCandidates = 4096;
inline constexpr std::size_t kTileElements = 128 * 4;  // one warp-iteration of the pass: 32 lanes x kUnroll float4
inline constexpr std::size_t kChunkTiles = 64;          // tie offsets are scanned per chunk, then per tile

struct PivotParams {
  const float* in;
  std::size_t n;
  std::uint64_t seed;
  long long first, centre, last;
  float cap_samples;  // B's capacity in sample units
  int allow_equality;
  WindowPlan* plan;
  WindowCounters* ctr;
  std::uint32_t* tile_ties;
  std::size_t n_tiles;
};

struct PassParams {
  const float* in;
  std::size_t n;
  const WindowPlan* plan;
  WindowCounters* ctr;
  std::uint64_t* buf_a;
  unsigned long long cap_a;
  std::uint64_t* buf_b;
  unsigned long long cap_b;
  std::uint32_t* tile_ties;  // null: no tie counts
  std::size_t n_tiles;
};

/// The resolve and finish kernels' parameters.
struct ChainParams {
  const float* in;
  std::size_t n;
  unsigned long long k;
  const WindowPlan* plan;
  WindowCounters* ctr;
  std::uint64_t* buf_a;
  unsigned long long cap_a;
  const std::uint64_t* buf_b;
  unsigned long long cap_b;
  std::uint64_t* cand;
  const std::uint32_t* tile_ties;
  unsigned long long* chunk_ties;
  std::size_t n_tiles;
  std::size_t n_chunks;
  std::size_t n_vec;
  int index_bits;
  float* out_values;
  std::uint32_t* out_indices;
  int sorted;
  WindowResult* result;
};

/// Pivot (window_pivot.cu): one block samples `samples` keys (4096, 8192 or 16384) and writes
/// the plan.
void launch_window_pivot(cudaStream_t stream, WindowKey key, int samples, const PivotParams& pp);
/// Pass (window_pass.cu): one wave over the input.
void launch_window_pass(cudaStream_t stream, WindowKey key, const PassParams& ps);
/// Resolve (window_resolve.cu) over `grid` blocks.
void launch_window_resolve(cudaStream_t stream, int grid, const ChainParams& cp);
/// Finish (window_finish.cu) over `grid` blocks.
void launch_window_finish(cudaStream_t stream, WindowKey key, int grid, const ChainParams& cp);

}  // namespace gpuclean::select::detail

// The window chain's host side: checks a call, derives each step's kernel parameters and launches
// the steps in order on the stream (window_select.hpp has the outline, window_kernels.hpp the steps).

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "select/cuda/per_device.hpp"
#include "select/detail/window_kernels.hpp"
#include "select/detail/window_logic.hpp"
#include "select/detail/window_select.hpp"

namespace gpuclean::select::detail {

std::size_t window_tiles(std::size_t n) { return (n / 4 + 127) / 128 + 1; }
std::size_t window_chunks(std::size_t n) { return (window_tiles(n) + kChunkTiles - 1) / kChunkTiles; }

int window_grid() { return std::max(1, std::min(cuda::sm_count(), kChainThreads)); }

void run_window_chain(cudaStream_t stream, const WindowChain& c) {
  if (c.n < 2 || c.n > (std::size_t{1} << 32)) throw std::logic_error("window chain: n out of range");
  if (c.k == 0 || c.k >= c.n) throw std::logic_error("window chain: top-k needs 0 < k < n");
  const bool aligned = (reinterpret_cast<std::uintptr_t>(c.in) & 15u) == 0;
  const std::size_t n_vec = aligned ? c.n / 4 : 0;
  const std::size_t n_tiles = (n_vec + 127) / 128 + 1;
  // Ties of an equality window are extracted by tile, which the pass counts on aligned input.
  std::uint32_t* ties = aligned ? c.tile_ties : nullptr;

  PivotParams pp{};
  pp.in = c.in;
  pp.n = c.n;
  pp.seed = c.seed;
  pp.first = c.first;
  pp.centre = c.centre;
  pp.last = c.last;
  pp.cap_samples = static_cast<float>(static_cast<double>(c.cap_b) * c.samples / static_cast<double>(c.n));
  pp.allow_equality = c.allow_equality && ties != nullptr;
  pp.plan = c.plan;
  pp.ctr = c.counters;
  pp.tile_ties = ties;
  pp.n_tiles = n_tiles;

  PassParams ps{};
  ps.in = c.in;
  ps.n = c.n;
  ps.plan = c.plan;
  ps.ctr = c.counters;
  ps.buf_a = c.buf_a;
  ps.cap_a = c.k;
  ps.buf_b = c.buf_b;
  ps.cap_b = c.cap_b;
  ps.tile_ties = ties;
  ps.n_tiles = n_tiles;

  ChainParams cp{};
  cp.in = c.in;
  cp.n = c.n;
  cp.k = c.k;
  cp.plan = c.plan;
  cp.ctr = c.counters;
  cp.buf_a = c.buf_a;
  cp.cap_a = c.k;
  cp.buf_b = c.buf_b;
  cp.cap_b = c.cap_b;
  cp.cand = c.candidates;
  cp.tile_ties = ties;
  cp.chunk_ties = c.chunk_ties;
  cp.n_tiles = n_tiles;
  cp.n_chunks = (n_tiles + kChunkTiles - 1) / kChunkTiles;
  cp.n_vec = n_vec;
  cp.index_bits = index_bits_for(c.n);
  cp.out_values = c.out_values;
  cp.out_indices = c.out_indices;
  cp.sorted = c.sorted;
  cp.result = c.result;

  launch_window_pivot(stream, c.key, c.samples, pp);
  launch_window_pass(stream, c.key, ps);
  const int grid = window_grid();
  launch_window_resolve(stream, grid, cp);  // top-k windows are narrow: one digit level suffices
  launch_window_finish(stream, c.key, grid, cp);
}

}  // namespace gpuclean::select::detail

// The window chain's finish step: writes A, the B keys below the final bin and the lowest-index
// ties, selects among the bin's candidates, and reports to mapped host memory.

#include <algorithm>

#include "select/cuda/cuda_check.hpp"
#include "select/detail/window_device.cuh"
#include "select/detail/window_kernels.hpp"
#include "select/detail/window_logic.hpp"

namespace gpuclean::select::detail {
namespace {

__device__ __forceinline__ void emit(const ChainParams& a, unsigned long long pos, std::uint64_t c) {
  if (a.sorted) {  // A's own composites are already in place below a_count
    a.buf_a[pos] = c;
    return;
  }
  const std::uint32_t idx = composite_index(c);
  a.out_indices[pos] = idx;
  a.out_values[pos] = __ldg(a.in + idx);
}

// One warp: the ties of v in elements [e0, e1) (one tile), whose first has rank o among all ties;
// those of rank below need go to out + rank. Every row of the tile is loaded before the first is
// used, so a tile costs one memory round trip.
template <WindowKey K>
__device__ void extract_tile(const ChainParams& a, std::size_t e0, std::size_t e1, unsigned long long o,
                             unsigned long long need, unsigned long long out, std::uint32_t v) {
  constexpr int kRows = static_cast<int>(kTileElements / 32);
  const int ln = lane_id();
  const unsigned lt = lanemask_lt();
  for (std::size_t base = e0; base < e1 && o < need; base += kTileElements) {
    std::uint32_t key[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const std::size_t i = base + static_cast<std::size_t>(r * 32 + ln);
      key[r] = i < e1 ? window_key<K>(__float_as_uint(__ldg(a.in + i))) : kInvalidKey;  // v is valid
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const bool tie = key[r] == v;
      const unsigned m = __ballot_sync(kFullMask, tie);
      if (tie) {
        const unsigned long long rank = o + static_cast<unsigned>(__popc(m & lt));
        if (rank < need) emit(a, out + rank, composite(v, static_cast<std::uint32_t>(base + r * 32 + ln)));
      }
      o += static_cast<unsigned>(__popc(m));
    }
  }
}

// The lowest-index need_v copies of v: chunks whose offset is below need_v go round-robin to the
// blocks; a block scans its chunk's tile counts, and each warp reads the tiles that hold ties of
// rank below need_v.
template <WindowKey K>
__device__ void extract_ties(const ChainParams& a, const WindowResolve& r, std::uint32_t v, unsigned* s_cnt,
                             unsigned long long* s_off) {
  const std::size_t vec_tiles = a.n_tiles - 1, vec_end = 4 * a.n_vec;
  const unsigned long long need = r.need_v, out = r.a_count + r.need_b;
  const int ln = lane_id(), w = static_cast<int>(threadIdx.x >> 5), nw = static_cast<int>(blockDim.x >> 5);
  for (std::size_t c = blockIdx.x; c < r.chunks; c += gridDim.x) {
    const unsigned long long chunk_off = a.chunk_ties[c];
    if (chunk_off >= need) break;  // offsets only grow; block-uniform
    if (w == 0) {  // the chunk's tile offsets: two tiles per lane, a warp scan
      const std::size_t t = c * kChunkTiles + 2 * static_cast<std::size_t>(ln);
      const unsigned c0 = t < a.n_tiles ? a.tile_ties[t] : 0u, c1 = t + 1 < a.n_tiles ? a.tile_ties[t + 1] : 0u;
      unsigned incl = c0 + c1;
      for (int o = 1; o < 32; o <<= 1) {
        const unsigned y = __shfl_up_sync(kFullMask, incl, o);
        if (ln >= o) incl += y;
      }
      const unsigned long long excl = chunk_off + (incl - c0 - c1);
      s_cnt[2 * ln] = c0;
      s_cnt[2 * ln + 1] = c1;
      s_off[2 * ln] = excl;
      s_off[2 * ln + 1] = excl + c0;
    }
    __syncthreads();
    for (int j = w; j < static_cast<int>(kChunkTiles); j += nw) {
      const std::size_t tile = c * kChunkTiles + static_cast<std::size_t>(j);
      if (s_cnt[j] == 0 || s_off[j] >= need) continue;  // warp-uniform
      const std::size_t e0 = tile < vec_tiles ? tile * kTileElements : vec_end;
      const std::size_t e1 = tile < vec_tiles ? min(e0 + kTileElements, vec_end) : a.n;
      extract_tile<K>(a, e0, e1, s_off[j], need, out, v);
    }
    __syncthreads();
  }
}

template <WindowKey K>
__global__ void __launch_bounds__(kChainThreads) finish_kernel(const ChainParams a) {
  __shared__ std::uint64_t s_cand[kSmemCandidates];
  __shared__ unsigned s_red[2][32][8];
  __shared__ std::uint64_t s_red64[2][32][2];
  __shared__ unsigned s_tile_cnt[kChunkTiles];
  __shared__ unsigned long long s_tile_off[kChunkTiles];
  __shared__ unsigned s_pos;
  __shared__ int s_last;
  const WindowResolve r = a.ctr->res;
  const WindowPlan pl = *a.plan;
  const bool ok = r.status == kWindowOk && !(r.select_b && r.cand > kWindowMaxCandidates);
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  if (ok && !a.sorted)
    for (std::size_t i = first; i < r.a_count; i += stride) emit(a, i, a.buf_a[i]);
  if (ok && r.emit_all_b)
    for (std::size_t i = first; i < r.nb; i += stride) emit(a, r.a_count + i, a.buf_b[i]);
  if (ok && r.select_b) {
    const std::size_t warp = first >> 5, n_warps = stride >> 5;
    for (std::size_t base = warp * 32; base < r.nb; base += n_warps * 32) {
      const std::size_t i = base + static_cast<std::size_t>(lane_id());
      const bool in = i < r.nb;
      const std::uint64_t c = in ? a.buf_b[i] : 0ull;
      const unsigned long long pfx = in ? rel_of(c, r.b_lo, a.index_bits) >> r.shift : 0ull;
      const bool below = in && pfx < r.prefix, cand = in && pfx == r.prefix;
      const unsigned long long pos = warp_reserve(below, &a.ctr->out_fill);
      if (below) emit(a, r.a_count + pos, c);
      const unsigned long long cpos = warp_reserve(cand, &a.ctr->cand_fill);
      if (cand && cpos < kWindowMaxCandidates) a.cand[cpos] = c;
    }
  }
  if (ok && r.need_v > 0) extract_ties<K>(a, r, pl.tie_key, s_tile_cnt, s_tile_off);
  if (!last_block(&a.ctr->ticket[1], s_last)) return;

  // The need_c smallest candidates are selected: the last block writes them.
  if (ok && r.select_b) {
    const unsigned nc = static_cast<unsigned>(r.cand), need = static_cast<unsigned>(r.need_c);
    const bool in_smem = nc <= kSmemCandidates;
    if (in_smem)
      for (unsigned i = threadIdx.x; i < nc; i += blockDim.x) s_cand[i] = __ldcg(a.cand + i);
    if (threadIdx.x == 0) s_pos = 0;
    __syncthreads();
    const unsigned long long emit_at = r.a_count + r.below;
    if (nc <= blockDim.x) {  // rank by counting: composites are distinct
      const bool mine = threadIdx.x < nc;
      const std::uint64_t c = mine ? s_cand[threadIdx.x] : ~0ull;
      unsigned less = 0;
      for (unsigned j = 0; j < nc; ++j) less += s_cand[j] < c;
      if (mine && less < need) emit(a, emit_at + atomicAdd(&s_pos, 1u), c);
    } else {  // bitwise: the largest y with #(candidates < y) <= need - 1
      int parity = 0, parity64 = 0;
      std::uint64_t mn = ~0ull, mx = 0ull;
      for (unsigned i = threadIdx.x; i < nc; i += blockDim.x) {
        const std::uint64_t c = in_smem ? s_cand[i] : __ldcg(a.cand + i);
        mn = min(mn, c);
        mx = max(mx, c);
      }
      block_min_max64(mn, mx, s_red64, parity64);
      const int hb = mn == mx ? -1 : 63 - __clzll(static_cast<long long>(mn ^ mx));
      std::uint64_t res = hb < 0 ? mn : (mn & ~((2ull << hb) - 1ull));
      for (int bit = hb; bit >= 0; --bit) {
        const std::uint64_t y = res | (1ull << bit);
        unsigned cnt[1] = {0u};
        for (unsigned i = threadIdx.x; i < nc; i += blockDim.x) cnt[0] += (in_smem ? s_cand[i] : __ldcg(a.cand + i)) < y;
        block_sum(cnt, s_red, parity);
        if (cnt[0] + 1 <= need) res = y;
      }
      for (unsigned i = threadIdx.x; i < nc; i += blockDim.x) {
        const std::uint64_t c = in_smem ? s_cand[i] : __ldcg(a.cand + i);
        if (c <= res) emit(a, emit_at + atomicAdd(&s_pos, 1u), c);
      }
    }
  }
  const unsigned long long count = ok ? r.total : 0ull;
  if (a.sorted)  // the sort that follows takes all k: the unused tail sorts last
    for (std::size_t i = count + threadIdx.x; i < a.cap_a; i += blockDim.x) a.buf_a[i] = ~0ull;
  if (threadIdx.x == 0) {
    a.ctr->final_count = count;
    a.result->count = count;
    a.result->status = ok ? kWindowOk : (r.status != kWindowOk ? r.status : static_cast<std::uint32_t>(kWindowCandidates));
  }
}

__global__ void write_sorted_kernel(const float* in, const std::uint64_t* sorted, std::size_t k,
                                    const WindowCounters* ctr, float* out_values, std::uint32_t* out_indices) {
  const unsigned long long count = min(static_cast<unsigned long long>(k), ctr->final_count);
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t idx = composite_index(sorted[i]);
    out_indices[i] = idx;
    out_values[i] = in[idx];
  }
}

}  // namespace

void launch_window_finish(cudaStream_t stream, WindowKey key, int grid, const ChainParams& cp) {
  switch (key) {
    case WindowKey::kLargest: finish_kernel<WindowKey::kLargest><<<grid, kChainThreads, 0, stream>>>(cp); break;
    case WindowKey::kSmallest: finish_kernel<WindowKey::kSmallest><<<grid, kChainThreads, 0, stream>>>(cp); break;
    case WindowKey::kLargestAbs: finish_kernel<WindowKey::kLargestAbs><<<grid, kChainThreads, 0, stream>>>(cp); break;
  }
  GPUCLEAN_CHECK_LAUNCH();
}

void write_sorted_window(cudaStream_t stream, const float* in, const std::uint64_t* sorted, std::size_t k,
                         const WindowCounters* counters, float* out_values, std::uint32_t* out_indices) {
  if (k == 0) return;
  const int grid = static_cast<int>(std::min<std::size_t>((k + 255) / 256, 1024));
  write_sorted_kernel<<<grid, 256, 0, stream>>>(in, sorted, k, counters, out_values, out_indices);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::select::detail

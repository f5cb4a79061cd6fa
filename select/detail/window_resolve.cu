// The window chain's resolve step: from the pass's counts, where the k-th key lies, then the
// digit bin of B that holds it.

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "select/cuda/cuda_check.hpp"
#include "select/detail/window_device.cuh"
#include "select/detail/window_kernels.hpp"
#include "select/detail/window_logic.hpp"

namespace gpuclean::select::detail {
namespace {

constexpr int kBinsPerThread = kWindowBins / kChainThreads;
static_assert(kWindowBins == kBinsPerThread * kChainThreads, "the last block scans whole bins per thread");

__device__ WindowResolve base_resolve(const ChainParams& a) {
  const WindowCounters& c = *a.ctr;
  PassCounts pc;
  for (int j = 0; j < 4; ++j) pc.seg[j] = c.seg[j];
  pc.fill_b = c.fill[1];
  pc.b_min_inv = c.b_min_inv;
  pc.b_max = c.b_max;
  return resolve_counts(a.k, a.cap_a, a.cap_b, a.tile_ties != nullptr, a.index_bits, *a.plan, pc);
}

using ScanU = cub::BlockScan<unsigned, kChainThreads>;
using ScanL = cub::BlockScan<unsigned long long, kChainThreads>;
using ReduceL = cub::BlockReduce<unsigned long long, kChainThreads>;
union ChainTemp {
  typename ScanU::TempStorage su;
  typename ScanL::TempStorage sl;
  typename ReduceL::TempStorage rl;
};

// The last block's bin search: the bin b of `hist` with before(b) < need <= before(b) + hist[b].
// Sets found = {bin, before, count}; leaves it untouched when no bin matches.
__device__ void find_bin(const unsigned* hist, unsigned long long need, ChainTemp& tmp, unsigned long long* found) {
  unsigned h[kBinsPerThread], sum = 0;
#pragma unroll
  for (int j = 0; j < kBinsPerThread; ++j) {
    h[j] = __ldcg(hist + kBinsPerThread * threadIdx.x + j);
    sum += h[j];
  }
  unsigned excl = 0;
  ScanU(tmp.su).ExclusiveSum(sum, excl);
  unsigned long long before = excl;
#pragma unroll
  for (int j = 0; j < kBinsPerThread; ++j) {
    if (before < need && need <= before + h[j]) {
      found[0] = kBinsPerThread * threadIdx.x + j;
      found[1] = before;
      found[2] = h[j];
    }
    before += h[j];
  }
  __syncthreads();
}

__global__ void __launch_bounds__(kChainThreads) resolve_kernel(const ChainParams a) {
  __shared__ WindowResolve s_res;
  __shared__ unsigned s_hist[kWindowBins];
  __shared__ ChainTemp s_tmp;
  __shared__ unsigned long long s_found[3];
  __shared__ int s_last;
  if (threadIdx.x == 0) {
    s_res = base_resolve(a);
    s_found[0] = 0;
    s_found[1] = 0;
    s_found[2] = ~0ull;  // no bin: fails the candidate check
  }
  for (int i = threadIdx.x; i < kWindowBins; i += blockDim.x) s_hist[i] = 0;
  __syncthreads();
  const WindowResolve r = s_res;
  const bool ok = r.status == kWindowOk;
  const std::uint32_t b_lo = r.b_lo;
  const int shift = max(0, r.total_bits - kWindowDigitBits);
  if (ok && r.select_b) {
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < r.nb;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
      atomicAdd(&s_hist[static_cast<unsigned>(rel_of(a.buf_b[i], b_lo, a.index_bits) >> shift) & (kWindowBins - 1)],
                1u);
    __syncthreads();
    for (int i = threadIdx.x; i < kWindowBins; i += blockDim.x)
      if (s_hist[i]) atomicAdd(&a.ctr->hist[i], s_hist[i]);
  }
  if (ok && r.need_v > 0) {  // ties per chunk of tiles, a warp per chunk
    const int ln = lane_id();
    const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x >> 5);
    for (std::size_t c = static_cast<std::size_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5); c < a.n_chunks;
         c += warps) {
      const std::size_t t = c * kChunkTiles + 2 * static_cast<std::size_t>(ln);
      const unsigned s = (t < a.n_tiles ? a.tile_ties[t] : 0u) + (t + 1 < a.n_tiles ? a.tile_ties[t + 1] : 0u);
      const unsigned total = __reduce_add_sync(kFullMask, s);
      if (ln == 0) a.chunk_ties[c] = total;
    }
  }
  if (!last_block(&a.ctr->ticket[0], s_last)) return;

  WindowResolve out = r;
  if (ok && r.select_b) {
    find_bin(a.ctr->hist, r.need_b, s_tmp, s_found);
    out.shift = shift;
    out.prefix = s_found[0];
    out.below = s_found[1];
    out.cand = s_found[2];
    out.need_c = r.need_b - s_found[1];
  }
  __syncthreads();
  if (ok && r.need_v > 0) {  // exclusive offsets of the chunks, in place, as far as need_v reaches
    unsigned long long running = 0;
    std::size_t base = 0;
    for (; base < a.n_chunks && running < r.need_v; base += blockDim.x) {
      const std::size_t c = base + threadIdx.x;
      const unsigned long long v = c < a.n_chunks ? __ldcg(&a.chunk_ties[c]) : 0ull;
      unsigned long long excl = 0, total = 0;
      ScanL(s_tmp.sl).ExclusiveSum(v, excl, total);
      if (c < a.n_chunks) a.chunk_ties[c] = running + excl;
      running += total;
      __syncthreads();
    }
    out.chunks = min(base, a.n_chunks);
  }
  if (threadIdx.x == 0) a.ctr->res = out;
}

}  // namespace

void launch_window_resolve(cudaStream_t stream, int grid, const ChainParams& cp) {
  resolve_kernel<<<grid, kChainThreads, 0, stream>>>(cp);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::select::detail

// The randomized backend's device-chained selection (see window_select.hpp for the outline).
// Every kernel here either runs a grid-stride loop over a size it reads from the device, or is
// one block; the "last block" of a grid (a ticket counter, Cuda Programming Guide's
// threadFenceReduction) does the small serial steps, so no step waits for the host.

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <stdexcept>

#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/window_logic.hpp"
#include "select/detail/window_select.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::select::detail {
namespace {

constexpr int kPivotThreads = 1024;
constexpr int kPassThreads = 256;
constexpr int kPassWarps = kPassThreads / 32;
constexpr int kStage = 256;  // staged composites per warp (2 KiB)
constexpr int kUnroll = 4;   // float4 loads in flight per lane
constexpr int kChainThreads = 512;
constexpr int kSmemCandidates = 4096;
constexpr std::size_t kTileElements = 128 * 4;  // one warp-iteration of the pass: 32 lanes x kUnroll float4
constexpr std::size_t kChunkTiles = 64;          // tie offsets are scanned per chunk, then per tile
constexpr int kBinsPerThread = kWindowBins / kChainThreads;
static_assert(kWindowBins == kBinsPerThread * kChainThreads, "the last block scans whole bins per thread");

__device__ __forceinline__ unsigned lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// ---- block-wide helpers (every thread calls; results in every thread) ----

// Sums kN values over the block. The two halves of `s` alternate between calls, so that one
// barrier per call suffices: a warp can only write a half again after every warp has passed
// the barrier that follows its reads of it.
template <int kN>
__device__ __forceinline__ void block_sum(unsigned (&v)[kN], unsigned (*s)[32][8], int& parity) {
  static_assert(kN <= 8, "eight values at most");
  const int w = static_cast<int>(threadIdx.x >> 5), ln = lane_id(), nw = static_cast<int>(blockDim.x >> 5);
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const unsigned t = __reduce_add_sync(kFullMask, v[j]);
    if (ln == 0) s[parity][w][j] = t;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kN; ++j) v[j] = __reduce_add_sync(kFullMask, ln < nw ? s[parity][ln][j] : 0u);
  parity ^= 1;
}

__device__ __forceinline__ void block_min_max(unsigned& mn, unsigned& mx, unsigned (*s)[32][8], int& parity) {
  const int w = static_cast<int>(threadIdx.x >> 5), ln = lane_id(), nw = static_cast<int>(blockDim.x >> 5);
  mn = __reduce_min_sync(kFullMask, mn);
  mx = __reduce_max_sync(kFullMask, mx);
  if (ln == 0) {
    s[parity][w][0] = mn;
    s[parity][w][1] = mx;
  }
  __syncthreads();
  mn = __reduce_min_sync(kFullMask, ln < nw ? s[parity][ln][0] : 0xFFFFFFFFu);
  mx = __reduce_max_sync(kFullMask, ln < nw ? s[parity][ln][1] : 0u);
  parity ^= 1;
}

__device__ __forceinline__ void block_min_max64(std::uint64_t& mn, std::uint64_t& mx, std::uint64_t (*s)[32][2],
                                                int& parity) {
  const int w = static_cast<int>(threadIdx.x >> 5), ln = lane_id(), nw = static_cast<int>(blockDim.x >> 5);
  for (int o = 16; o > 0; o >>= 1) {
    mn = min(mn, __shfl_xor_sync(kFullMask, mn, o));
    mx = max(mx, __shfl_xor_sync(kFullMask, mx, o));
  }
  if (ln == 0) {
    s[parity][w][0] = mn;
    s[parity][w][1] = mx;
  }
  __syncthreads();
  mn = ln < nw ? s[parity][ln][0] : ~0ull;
  mx = ln < nw ? s[parity][ln][1] : 0ull;
  for (int o = 16; o > 0; o >>= 1) {
    mn = min(mn, __shfl_xor_sync(kFullMask, mn, o));
    mx = max(mx, __shfl_xor_sync(kFullMask, mx, o));
  }
  parity ^= 1;
}

// True in every thread of the grid's last block to get here; its earlier blocks' writes are
// then visible to it (each thread fences its own writes before the barrier and the ticket).
__device__ __forceinline__ bool last_block(unsigned* ticket, int& s_last) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) s_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (s_last) __threadfence();
  return s_last != 0;
}

// Reserves one slot per wanting lane on `counter`, one atomic per warp. All lanes call.
__device__ __forceinline__ unsigned long long warp_reserve(bool want, unsigned long long* counter) {
  const unsigned m = __ballot_sync(kFullMask, want);
  if (m == 0) return 0;
  const int leader = __ffs(m) - 1;
  unsigned long long base = 0;
  if (lane_id() == leader) base = atomicAdd(counter, static_cast<unsigned long long>(__popc(m)));
  base = __shfl_sync(kFullMask, base, leader);
  return base + static_cast<unsigned>(__popc(m & lanemask_lt()));
}

// ---- pivot: one block chooses the window from a sample ----

struct PivotParams {
  const float* in;
  std::size_t n;
  std::uint64_t seed;
  const float* centre_value;
  long long first, centre, last;
  int quantile;
  float z;
  float cap_samples;  // B's capacity in sample units
  int allow_equality;
  int topk;
  WindowPlan* plan;
  WindowCounters* ctr;
  std::uint32_t* tile_ties;
  std::size_t n_tiles;
};

template <WindowKey K, int kItems>
__global__ void __launch_bounds__(kPivotThreads) pivot_kernel(const PivotParams a) {
  constexpr long long kS = static_cast<long long>(kPivotThreads) * kItems;
  __shared__ unsigned s_red[2][32][8];
  int parity = 0;
  {
    auto* words = reinterpret_cast<unsigned long long*>(a.ctr);
    for (std::size_t i = threadIdx.x; i < sizeof(WindowCounters) / 8; i += blockDim.x) words[i] = 0;
    if (threadIdx.x == 0 && a.tile_ties) a.tile_ties[a.n_tiles - 1] = 0;  // the tail tile is added to
  }
  const float centre = K == WindowKey::kDeviation ? *a.centre_value : 0.0f;
  std::uint32_t key[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const std::uint64_t j = threadIdx.x + static_cast<std::uint64_t>(i) * kPivotThreads;
    const std::uint64_t h = mix64(a.seed + 0x9E3779B97F4A7C15ull * (j + 1));
    key[i] = window_key<K>(__float_as_uint(__ldg(a.in + __umul64hi(h, a.n))), centre);
  }
  unsigned mn = 0xFFFFFFFFu, mx = 0u, valid[1] = {0u};
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    mn = min(mn, key[i]);
    mx = max(mx, key[i]);
    valid[0] += key[i] != kInvalidKey;
  }
  block_min_max(mn, mx, s_red, parity);
  block_sum(valid, s_red, parity);
  const long long sv = valid[0];  // invalid keys sort last: ranks below sv are valid samples

  SampleWindow w{a.first, a.centre, a.last};
  if (a.quantile) w = quantile_window(sv, a.z, kS);
  const long long first = w.first, centre_rank = w.centre, last = w.last;
  const long long rank[3] = {first < 0 ? 0 : first, centre_rank, last >= kS ? 0 : last};

  // The sample's order statistics at the three ranks, bit by bit from the highest bit in which
  // the keys differ: res = the largest key y with #(keys < y) <= rank.
  unsigned res[3];
  const int hb = mn == mx ? -1 : 31 - __clz(mn ^ mx);
  const unsigned pre = hb < 0 ? mn : static_cast<unsigned>(mn & ~((2ull << hb) - 1ull));
  res[0] = res[1] = res[2] = pre;
  for (int bit = hb; bit >= 0; --bit) {
    unsigned cnt[3] = {0u, 0u, 0u};
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      const unsigned c = res[j] | (1u << bit);
#pragma unroll
      for (int i = 0; i < kItems; ++i) cnt[j] += key[i] < c;
    }
    block_sum(cnt, s_red, parity);
#pragma unroll
    for (int j = 0; j < 3; ++j)
      if (static_cast<long long>(cnt[j]) <= rank[j]) res[j] |= 1u << bit;
  }
  // Runs of equal keys at the three: samples below and equal.
  unsigned runs[6] = {0u, 0u, 0u, 0u, 0u, 0u};
#pragma unroll
  for (int j = 0; j < 3; ++j) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      runs[2 * j] += key[i] < res[j];
      runs[2 * j + 1] += key[i] == res[j];
    }
  }
  block_sum(runs, s_red, parity);
  if (threadIdx.x != 0) return;
  PlanInputs in;
  in.samples = kS;
  in.first = first;
  in.last = last;
  in.valid = sv;
  in.key_first = res[0];
  in.key_centre = res[1];
  in.key_last = res[2];
  in.below_first = runs[0];
  in.equal_first = runs[1];
  in.below_centre = runs[2];
  in.equal_centre = runs[3];
  in.below_last = runs[4];
  in.equal_last = runs[5];
  in.cap_samples = a.cap_samples;
  in.allow_equality = a.allow_equality != 0;
  in.topk = a.topk != 0;
  *a.plan = make_plan(in);
}

// ---- the pass ----

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
  const float* centre_value;
};

// Writes `count` staged composites to `buf` at a position reserved with one atomic; once the
// counter passes the capacity (the overflow is on record) the warp stops reserving.
__device__ __forceinline__ void drain(const std::uint64_t* row, unsigned count, bool from_back, std::uint64_t* buf,
                                      unsigned long long cap, unsigned long long* fill, bool& room) {
  unsigned long long base = 0;
  if (lane_id() == 0 && room) base = atomicAdd(fill, static_cast<unsigned long long>(count));
  base = __shfl_sync(kFullMask, base, 0);
  if (!room) return;
  for (unsigned i = static_cast<unsigned>(lane_id()); i < count; i += 32) {
    const unsigned long long pos = base + i;
    if (pos < cap) buf[pos] = from_back ? row[kStage - 1 - i] : row[i];
  }
  room = base + count <= cap;
}

// A warp's appends staged in shared memory, A from the front of its row and B from the back,
// written out in runs: one atomic per run instead of one per ballot.
struct Stager {
  std::uint64_t* row;
  std::uint64_t* buf_a;
  std::uint64_t* buf_b;
  unsigned long long cap_a, cap_b;
  unsigned long long* fill;
  unsigned na, nb;  // warp-uniform
  bool room_a, room_b;

  __device__ __forceinline__ void flush() {
    __syncwarp();
    if (na) drain(row, na, false, buf_a, cap_a, &fill[0], room_a);
    if (nb) drain(row, nb, true, buf_b, cap_b, &fill[1], room_b);
    __syncwarp();
    na = nb = 0;
  }
  // All lanes call, with kRegionNone when they append nothing.
  __device__ __forceinline__ void push(unsigned region, std::uint64_t c) {
    const unsigned ma = __ballot_sync(kFullMask, region == kRegionA);
    const unsigned mb = __ballot_sync(kFullMask, region == kRegionB);
    if ((ma | mb) == 0) return;
    const unsigned lt = lanemask_lt();
    if (region == kRegionA) row[na + __popc(ma & lt)] = c;
    if (region == kRegionB) row[kStage - 1 - (nb + __popc(mb & lt))] = c;
    na += __popc(ma);
    nb += __popc(mb);
    if (na + nb > kStage - 32) flush();  // room for the next ballot's 32
  }
};

// Keys below fast_lo (segment 0 of order statistics) and keys at or above the last bound
// (segment 4) take the fast path: a compare and a count. A warp with any other key among its
// four elements per lane takes the slow path for all of them: the segment, its count, the
// append and, with an equality window, the tie count of the tile.
template <WindowKey K, bool kCountInvalid>
__global__ void __launch_bounds__(kPassThreads) window_pass_kernel(const PassParams p) {
  __shared__ std::uint64_t s_stage[kPassWarps][kStage];
  __shared__ unsigned long long s_cnt[5];
  __shared__ unsigned s_range[2];
  if (threadIdx.x < 5) s_cnt[threadIdx.x] = 0;
  if (threadIdx.x < 2) s_range[threadIdx.x] = 0;
  const WindowPlan* pl = p.plan;
  const std::uint32_t b0 = pl->bound[0], b1 = pl->bound[1], b2 = pl->bound[2], b3 = pl->bound[3];
  const std::uint32_t flo = pl->fast_lo, span = b3 - flo;
  const std::uint32_t regions = pl->regions;
  std::uint32_t* const ties_out = pl->equality ? p.tile_ties : nullptr;
  const float centre = K == WindowKey::kDeviation ? *p.centre_value : 0.0f;
  __syncthreads();

  const int ln = lane_id();
  Stager st{s_stage[threadIdx.x >> 5], p.buf_a, p.buf_b, p.cap_a, p.cap_b, p.ctr->fill, 0u, 0u, true, true};
  unsigned c0 = 0, c1 = 0, c2 = 0, c3 = 0, below = 0, invalid = 0;
  unsigned b_min_inv = 0, b_max = 0;  // B's key range, for the digits of the selection inside it

  auto fast = [&](std::uint32_t key, bool ok) {
    if constexpr (kCountInvalid) invalid += ok && key == kInvalidKey;
    below += ok && key < flo;
    return ok && key - flo < span;
  };
  auto slow = [&](std::uint32_t key, bool inside, std::size_t index, unsigned& ties) {
    const int sg = static_cast<int>(b0 <= key) + static_cast<int>(b1 <= key) + static_cast<int>(b2 <= key);
    if (inside) {
      c0 += sg == 0;
      c1 += sg == 1;
      c2 += sg == 2;
      c3 += sg == 3;
    }
    if (ties_out) ties += __popc(__ballot_sync(kFullMask, inside && sg == 2));
    const unsigned region = inside ? (regions >> (2 * sg)) & 3u : static_cast<unsigned>(kRegionNone);
    if (region == kRegionB) {
      b_min_inv = max(b_min_inv, ~key);
      b_max = max(b_max, key);
    }
    st.push(region, composite(key, static_cast<std::uint32_t>(index)));
  };

  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(p.in) & 15u) == 0;
  const std::size_t n = p.n;
  const std::size_t n_vec = aligned ? n / 4 : 0;
  const uint4* in4 = reinterpret_cast<const uint4*>(p.in);
  constexpr std::size_t kTile = 32 * kUnroll;  // float4 per warp-iteration: one tile
  for (std::size_t base = warp * kTile; base < n_vec; base += n_warps * kTile) {
    uint4 q[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = base + static_cast<std::size_t>(u * 32 + ln);
      q[u] = v < n_vec ? __ldcs(in4 + v) : make_uint4(0u, 0u, 0u, 0u);
    }
    unsigned ties = 0;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = base + static_cast<std::size_t>(u * 32 + ln);
      const bool ok = v < n_vec;
      const std::uint32_t k0 = window_key<K>(q[u].x, centre), k1 = window_key<K>(q[u].y, centre);
      const std::uint32_t k2 = window_key<K>(q[u].z, centre), k3 = window_key<K>(q[u].w, centre);
      const bool i0 = fast(k0, ok), i1 = fast(k1, ok), i2 = fast(k2, ok), i3 = fast(k3, ok);
      if (__any_sync(kFullMask, i0 | i1 | i2 | i3)) {
        slow(k0, i0, 4 * v, ties);
        slow(k1, i1, 4 * v + 1, ties);
        slow(k2, i2, 4 * v + 2, ties);
        slow(k3, i3, 4 * v + 3, ties);
      }
    }
    if (ties_out && ln == 0) ties_out[base / kTile] = ties;  // every vector tile once, zero included
  }
  // The tail (fewer than four elements when aligned; everything when not) is the last tile.
  for (std::size_t base = n_vec * 4 + warp * 32; base < n; base += n_warps * 32) {
    const std::size_t i = base + static_cast<std::size_t>(ln);
    const bool ok = i < n;
    const std::uint32_t key = window_key<K>(ok ? __float_as_uint(__ldcs(p.in + i)) : 0u, centre);
    const bool inside = fast(key, ok);
    unsigned ties = 0;
    if (__any_sync(kFullMask, inside)) slow(key, inside, i, ties);
    if (ties_out && ln == 0 && ties) atomicAdd(&ties_out[p.n_tiles - 1], ties);
  }
  st.flush();

  const unsigned part[5] = {c0 + below, c1, c2, c3, invalid};
#pragma unroll
  for (int j = 0; j < 5; ++j) {
    const unsigned t = __reduce_add_sync(kFullMask, part[j]);
    if (ln == 0 && t) atomicAdd(&s_cnt[j], static_cast<unsigned long long>(t));
  }
  b_min_inv = __reduce_max_sync(kFullMask, b_min_inv);
  b_max = __reduce_max_sync(kFullMask, b_max);
  if (ln == 0 && (b_min_inv | b_max)) {
    atomicMax(&s_range[0], b_min_inv);
    atomicMax(&s_range[1], b_max);
  }
  __syncthreads();
  if (threadIdx.x < 5 && s_cnt[threadIdx.x])
    atomicAdd(threadIdx.x < 4 ? &p.ctr->seg[threadIdx.x] : &p.ctr->invalid, s_cnt[threadIdx.x]);
  if (threadIdx.x < 2 && s_range[threadIdx.x])
    atomicMax(threadIdx.x == 0 ? &p.ctr->b_min_inv : &p.ctr->b_max, s_range[threadIdx.x]);
}

// ---- resolve, refine, finish ----

struct ChainParams {
  const float* in;
  std::size_t n;
  WindowJob job;
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
  float* answer_value;
};

__device__ WindowResolve base_resolve(const ChainParams& a) {
  const WindowCounters& c = *a.ctr;
  PassCounts pc;
  for (int j = 0; j < 4; ++j) pc.seg[j] = c.seg[j];
  pc.invalid = c.invalid;
  pc.fill_b = c.fill[1];
  pc.b_min_inv = c.b_min_inv;
  pc.b_max = c.b_max;
  return resolve_counts(a.job, a.n, a.k, a.cap_a, a.cap_b, a.tile_ties != nullptr, a.index_bits, *a.plan, pc);
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
      if (s_hist[i]) atomicAdd(&a.ctr->hist[0][i], s_hist[i]);
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
    find_bin(a.ctr->hist[0], r.need_b, s_tmp, s_found);
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

// A second digit level inside the bin when it is too large for shared memory (wide windows:
// order statistics, whose window keys spread over several binades).
__global__ void __launch_bounds__(kChainThreads) refine_kernel(const ChainParams a) {
  __shared__ unsigned s_hist[kWindowBins];
  __shared__ ChainTemp s_tmp;
  __shared__ unsigned long long s_found[3];
  __shared__ int s_last;
  const WindowResolve r = a.ctr->res;
  if (r.status != kWindowOk || !r.select_b || r.cand <= kSmemCandidates || r.cand == ~0ull || r.shift == 0) return;
  const int shift = max(0, r.shift - kWindowDigitBits), width = r.shift - shift;
  const unsigned mask = (1u << width) - 1u;
  const std::uint32_t b_lo = r.b_lo;
  for (int i = threadIdx.x; i < kWindowBins; i += blockDim.x) s_hist[i] = 0;
  if (threadIdx.x == 0) {
    s_found[0] = 0;
    s_found[1] = 0;
    s_found[2] = ~0ull;
  }
  __syncthreads();
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < r.nb;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const unsigned long long rel = rel_of(a.buf_b[i], b_lo, a.index_bits);
    if ((rel >> r.shift) == r.prefix) atomicAdd(&s_hist[static_cast<unsigned>(rel >> shift) & mask], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kWindowBins; i += blockDim.x)
    if (s_hist[i]) atomicAdd(&a.ctr->hist[1][i], s_hist[i]);
  if (!last_block(&a.ctr->ticket[1], s_last)) return;
  find_bin(a.ctr->hist[1], r.need_c, s_tmp, s_found);
  if (threadIdx.x == 0) {
    WindowResolve out = r;
    out.prefix = (r.prefix << width) | s_found[0];
    out.shift = shift;
    out.below = r.below + s_found[1];
    out.cand = s_found[2];
    out.need_c = r.need_c - s_found[1];
    a.ctr->res = out;
  }
}

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
      key[r] = i < e1 ? window_key<K>(__float_as_uint(__ldg(a.in + i)), 0.0f) : kInvalidKey;  // v is valid
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
  __shared__ std::uint64_t s_x;
  __shared__ unsigned s_pos;
  __shared__ int s_last;
  const WindowResolve r = a.ctr->res;
  const WindowPlan pl = *a.plan;
  const bool topk = a.job == WindowJob::kTopK;
  const bool ok = r.status == kWindowOk && !(r.select_b && r.cand > kWindowMaxCandidates);
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  if (ok && topk && !a.sorted)
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
      if (topk) {
        const unsigned long long pos = warp_reserve(below, &a.ctr->out_fill);
        if (below) emit(a, r.a_count + pos, c);
      }
      const unsigned long long pos = warp_reserve(cand, &a.ctr->cand_fill);
      if (cand && pos < kWindowMaxCandidates) a.cand[pos] = c;
    }
  }
  if (ok && topk && r.need_v > 0) extract_ties<K>(a, r, pl.tie_key, s_tile_cnt, s_tile_off);
  if (!last_block(&a.ctr->ticket[2], s_last)) return;

  // The need_c-th smallest candidate; top-k also writes every candidate up to it.
  std::uint64_t x = 0;
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
      if (mine && less + 1 == need) s_x = c;
      if (topk && mine && less < need) emit(a, emit_at + atomicAdd(&s_pos, 1u), c);
      __syncthreads();
      x = s_x;
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
      x = res;
      if (topk)
        for (unsigned i = threadIdx.x; i < nc; i += blockDim.x) {
          const std::uint64_t c = in_smem ? s_cand[i] : __ldcg(a.cand + i);
          if (c <= x) emit(a, emit_at + atomicAdd(&s_pos, 1u), c);
        }
    }
  }
  const unsigned long long count = ok && topk ? r.total : 0ull;
  if (a.sorted)  // the sort that follows takes all k: the unused tail sorts last
    for (std::size_t i = count + threadIdx.x; i < a.cap_a; i += blockDim.x) a.buf_a[i] = ~0ull;
  if (threadIdx.x == 0) {
    std::uint32_t answer = kInvalidKey;
    if (ok && !topk && !r.answer_nan) answer = r.target_is_tie ? pl.tie_key : composite_key(x);
    a.ctr->final_count = count;
    if (a.answer_value)
      *a.answer_value = answer != kInvalidKey ? from_ascending_bits(answer) : __uint_as_float(0x7FC00000u);
    a.result->count = count;
    a.result->key = answer;
    a.result->n_valid = r.n_valid;
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

// ---- dispatch ----

template <WindowKey K>
void launch_pivot(cudaStream_t stream, int samples, const PivotParams& pp) {
  switch (samples) {
    case 4096: pivot_kernel<K, 4><<<1, kPivotThreads, 0, stream>>>(pp); break;
    case 8192: pivot_kernel<K, 8><<<1, kPivotThreads, 0, stream>>>(pp); break;
    case 16384: pivot_kernel<K, 16><<<1, kPivotThreads, 0, stream>>>(pp); break;
    default: throw std::logic_error("window chain: samples must be 4096, 8192 or 16384");
  }
  GPUCLEAN_CHECK_LAUNCH();
}

// One wave of the pass: every block resident at once, so that no SM idles through a partial
// second wave of a grid-stride loop whose shares are equal. Per device (batch workers).
template <WindowKey K, bool kCountInvalid>
int pass_grid() {
  static std::array<std::atomic<int>, cuda::kMaxDevices> cache{};
  const auto d = static_cast<std::size_t>(cuda::current_device());
  int grid = cache[d].load(std::memory_order_relaxed);
  if (grid == 0) {
    int per_sm = 0;
    GPUCLEAN_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, window_pass_kernel<K, kCountInvalid>,
                                                                    kPassThreads, 0));
    grid = cuda::sm_count() * std::max(1, per_sm);
    cache[d].store(grid, std::memory_order_relaxed);  // every thread stores the same
  }
  return grid;
}

template <WindowKey K>
void launch_pass_and_finish(cudaStream_t stream, const WindowChain& c, const PivotParams& pp, const PassParams& ps,
                            const ChainParams& cp, bool count_invalid) {
  launch_pivot<K>(stream, c.samples, pp);
  if (count_invalid) {
    window_pass_kernel<K, true><<<pass_grid<K, true>(), kPassThreads, 0, stream>>>(ps);
  } else {
    window_pass_kernel<K, false><<<pass_grid<K, false>(), kPassThreads, 0, stream>>>(ps);
  }
  GPUCLEAN_CHECK_LAUNCH();
  const int grid = window_grid();
  resolve_kernel<<<grid, kChainThreads, 0, stream>>>(cp);
  GPUCLEAN_CHECK_LAUNCH();
  if (c.job != WindowJob::kTopK) {  // top-k windows are narrow: one digit level suffices
    refine_kernel<<<grid, kChainThreads, 0, stream>>>(cp);
    GPUCLEAN_CHECK_LAUNCH();
  }
  finish_kernel<K><<<grid, kChainThreads, 0, stream>>>(cp);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace

std::size_t window_tiles(std::size_t n) { return (n / 4 + 127) / 128 + 1; }
std::size_t window_chunks(std::size_t n) { return (window_tiles(n) + kChunkTiles - 1) / kChunkTiles; }

int window_grid() { return std::max(1, std::min(cuda::sm_count(), kChainThreads)); }

void run_window_chain(cudaStream_t stream, const WindowChain& c) {
  if (c.n < 2 || c.n > (std::size_t{1} << 32)) throw std::logic_error("window chain: n out of range");
  const bool topk = c.job == WindowJob::kTopK;
  if (topk && (c.k == 0 || c.k >= c.n)) throw std::logic_error("window chain: top-k needs 0 < k < n");
  const bool aligned = (reinterpret_cast<std::uintptr_t>(c.in) & 15u) == 0;
  const std::size_t n_vec = aligned ? c.n / 4 : 0;
  const std::size_t n_tiles = (n_vec + 127) / 128 + 1;
  // Ties of an equality window are extracted by tile, which the pass counts on aligned input.
  std::uint32_t* ties = topk && aligned ? c.tile_ties : nullptr;

  PivotParams pp{};
  pp.in = c.in;
  pp.n = c.n;
  pp.seed = c.seed;
  pp.centre_value = c.centre_value;
  pp.first = c.first;
  pp.centre = c.centre;
  pp.last = c.last;
  pp.quantile = c.job == WindowJob::kMedianValid;
  pp.z = static_cast<float>(c.z);
  pp.cap_samples = static_cast<float>(static_cast<double>(c.cap_b) * c.samples / static_cast<double>(c.n));
  pp.allow_equality = c.allow_equality && (!topk || ties != nullptr);
  pp.topk = topk;
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
  ps.cap_a = topk ? c.k : 0;
  ps.buf_b = c.buf_b;
  ps.cap_b = c.cap_b;
  ps.tile_ties = ties;
  ps.n_tiles = n_tiles;
  ps.centre_value = c.centre_value;

  ChainParams cp{};
  cp.in = c.in;
  cp.n = c.n;
  cp.job = c.job;
  cp.k = c.k;
  cp.plan = c.plan;
  cp.ctr = c.counters;
  cp.buf_a = c.buf_a;
  cp.cap_a = topk ? c.k : 0;
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
  cp.answer_value = c.answer_value;

  switch (c.key) {
    case WindowKey::kLargest: launch_pass_and_finish<WindowKey::kLargest>(stream, c, pp, ps, cp, false); break;
    case WindowKey::kSmallest: launch_pass_and_finish<WindowKey::kSmallest>(stream, c, pp, ps, cp, !topk); break;
    case WindowKey::kLargestAbs: launch_pass_and_finish<WindowKey::kLargestAbs>(stream, c, pp, ps, cp, false); break;
    case WindowKey::kFinite: launch_pass_and_finish<WindowKey::kFinite>(stream, c, pp, ps, cp, true); break;
    case WindowKey::kDeviation: launch_pass_and_finish<WindowKey::kDeviation>(stream, c, pp, ps, cp, true); break;
  }
}

void write_sorted_window(cudaStream_t stream, const float* in, const std::uint64_t* sorted, std::size_t k,
                         const WindowCounters* counters, float* out_values, std::uint32_t* out_indices) {
  if (k == 0) return;
  const int grid = static_cast<int>(std::min<std::size_t>((k + 255) / 256, 1024));
  write_sorted_kernel<<<grid, 256, 0, stream>>>(in, sorted, k, counters, out_values, out_indices);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::select::detail

// The window chain's pass: one wave over the input counts the window's segments and saves the
// keys below it to A and the window to B, staged per warp in shared memory.

#include <algorithm>
#include <array>
#include <atomic>

#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/window_device.cuh"
#include "select/detail/window_kernels.hpp"
#include "select/detail/window_logic.hpp"

namespace gpuclean::select::detail {
namespace {

constexpr int kPassWarps = kPassThreads / 32;
constexpr int kStage = 256;  // staged composites per warp (2 KiB)
constexpr int kUnroll = 4;   // float4 loads in flight per lane

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

// Keys at or above the last bound (segment 4) take the fast path: a compare (so would keys
// below fast_lo, counted in segment 0, but top-k plans set it to 0). A warp with any other key
// among its four elements per lane takes the slow path for all of them: the segment, its count,
// the append and, with an equality window, the tie count of the tile.
template <WindowKey K>
__global__ void __launch_bounds__(kPassThreads) window_pass_kernel(const PassParams p) {
  __shared__ std::uint64_t s_stage[kPassWarps][kStage];
  __shared__ unsigned long long s_cnt[4];
  __shared__ unsigned s_range[2];
  if (threadIdx.x < 4) s_cnt[threadIdx.x] = 0;
  if (threadIdx.x < 2) s_range[threadIdx.x] = 0;
  const WindowPlan* pl = p.plan;
  const std::uint32_t b0 = pl->bound[0], b1 = pl->bound[1], b2 = pl->bound[2], b3 = pl->bound[3];
  const std::uint32_t flo = pl->fast_lo, span = b3 - flo;
  const std::uint32_t regions = pl->regions;
  std::uint32_t* const ties_out = pl->equality ? p.tile_ties : nullptr;
  __syncthreads();

  const int ln = lane_id();
  Stager st{s_stage[threadIdx.x >> 5], p.buf_a, p.buf_b, p.cap_a, p.cap_b, p.ctr->fill, 0u, 0u, true, true};
  unsigned c0 = 0, c1 = 0, c2 = 0, c3 = 0, below = 0;
  unsigned b_min_inv = 0, b_max = 0;  // B's key range, for the digits of the selection inside it

  auto fast = [&](std::uint32_t key, bool ok) {
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
      const std::uint32_t k0 = window_key<K>(q[u].x), k1 = window_key<K>(q[u].y);
      const std::uint32_t k2 = window_key<K>(q[u].z), k3 = window_key<K>(q[u].w);
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
    const std::uint32_t key = window_key<K>(ok ? __float_as_uint(__ldcs(p.in + i)) : 0u);
    const bool inside = fast(key, ok);
    unsigned ties = 0;
    if (__any_sync(kFullMask, inside)) slow(key, inside, i, ties);
    if (ties_out && ln == 0 && ties) atomicAdd(&ties_out[p.n_tiles - 1], ties);
  }
  st.flush();

  const unsigned part[4] = {c0 + below, c1, c2, c3};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
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
  if (threadIdx.x < 4 && s_cnt[threadIdx.x]) atomicAdd(&p.ctr->seg[threadIdx.x], s_cnt[threadIdx.x]);
  if (threadIdx.x < 2 && s_range[threadIdx.x])
    atomicMax(threadIdx.x == 0 ? &p.ctr->b_min_inv : &p.ctr->b_max, s_range[threadIdx.x]);
}

// One wave of the pass: every block resident at once, so that no SM idles through a partial
// second wave of a grid-stride loop whose shares are equal. Per device (batch workers).
template <WindowKey K>
int pass_grid() {
  static std::array<std::atomic<int>, cuda::kMaxDevices> cache{};
  const auto d = static_cast<std::size_t>(cuda::current_device());
  int grid = cache[d].load(std::memory_order_relaxed);
  if (grid == 0) {
    int per_sm = 0;
    GPUCLEAN_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, window_pass_kernel<K>, kPassThreads, 0));
    grid = cuda::sm_count() * std::max(1, per_sm);
    cache[d].store(grid, std::memory_order_relaxed);  // every thread stores the same
  }
  return grid;
}

template <WindowKey K>
void launch_pass(cudaStream_t stream, const PassParams& ps) {
  window_pass_kernel<K><<<pass_grid<K>(), kPassThreads, 0, stream>>>(ps);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace

void launch_window_pass(cudaStream_t stream, WindowKey key, const PassParams& ps) {
  switch (key) {
    case WindowKey::kLargest: launch_pass<WindowKey::kLargest>(stream, ps); break;
    case WindowKey::kSmallest: launch_pass<WindowKey::kSmallest>(stream, ps); break;
    case WindowKey::kLargestAbs: launch_pass<WindowKey::kLargestAbs>(stream, ps); break;
  }
}

}  // namespace gpuclean::select::detail

// The window chain's pass: one wave over the input counts the window's segments and saves the
// keys below it to A and the window to B, staged per warp in shared memory.

#include <algorithm>
#include <array>
#include <atomic>
#include <type_traits>

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
// among its four elements per lane takes the slow path for all four: the segment and, when some
// lane saves one, the append. A lane counts its slow keys of a tile by segment in one word, a
// byte a segment (16 keys at most), and the tile's tie count (segment 2, with an equality window)
// is one warp sum of that byte: duplicate-heavy data, where nearly every tile takes the slow
// path, costs a few instructions a key and no vote per key.
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
  // An equality window's key v: its copies are segment 2 (counted, not saved). A tile whose inside
  // keys are all v (all_equal data, or the top value's copies among keys above the window) is
  // counted with one compare a key instead of the slow path's segments and vote.
  const bool eq_fast = pl->equality && b0 <= b1 && b2 == b1 + 1u;
  __syncthreads();

  const int ln = lane_id();
  Stager st{s_stage[threadIdx.x >> 5], p.buf_a, p.buf_b, p.cap_a, p.cap_b, p.ctr->fill, 0u, 0u, true, true};
  unsigned c0 = 0, c1 = 0, c2 = 0, c3 = 0, below = 0;
  unsigned b_min_inv = 0, b_max = 0;  // B's key range, for the digits of the selection inside it

  auto fast = [&](std::uint32_t key, bool ok) {
    below += ok && key < flo;
    return ok && key - flo < span;
  };
  // The key's region (kRegionNone when it is not inside or its segment is not saved); counts it.
  auto slow = [&](std::uint32_t key, bool inside, unsigned& seg_bytes) -> unsigned {
    const unsigned sg = static_cast<unsigned>(b0 <= key) + static_cast<unsigned>(b1 <= key) +
                        static_cast<unsigned>(b2 <= key);
    if (!inside) return kRegionNone;
    seg_bytes += 1u << (8 * sg);
    const unsigned region = (regions >> (2 * sg)) & 3u;
    if (region == kRegionB) {
      b_min_inv = max(b_min_inv, ~key);
      b_max = max(b_max, key);
    }
    return region;
  };
  auto add_segments = [&](unsigned seg_bytes) {
    c0 += seg_bytes & 0xFFu;
    c1 += (seg_bytes >> 8) & 0xFFu;
    c2 += (seg_bytes >> 16) & 0xFFu;
    c3 += seg_bytes >> 24;
  };

  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(p.in) & 15u) == 0;
  const std::size_t n = p.n;
  const std::size_t n_vec = aligned ? n / 4 : 0;
  const uint4* in4 = reinterpret_cast<const uint4*>(p.in);
  constexpr std::size_t kTile = 32 * kUnroll;  // float4 per warp-iteration: one tile
  // The tiles, compiled twice: with the equality fast path and without. With the test in the one
  // loop, continuous data at k = 65536 ran 5 - 8% slower than before the fast path; compiled
  // twice, every distribution ran as fast or faster (H200, 2^28, three runs of each build).
  auto tiles = [&](auto eq_tag) {
    constexpr bool kEq = decltype(eq_tag)::value;
    for (std::size_t base = warp * kTile; base < n_vec; base += n_warps * kTile) {
      uint4 q[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t v = base + static_cast<std::size_t>(u * 32 + ln);
        q[u] = v < n_vec ? __ldcs(in4 + v) : make_uint4(0u, 0u, 0u, 0u);
      }
      unsigned seg_bytes = 0;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t v = base + static_cast<std::size_t>(u * 32 + ln);
        const bool ok = v < n_vec;
        const std::uint32_t k0 = window_key<K>(q[u].x), k1 = window_key<K>(q[u].y);
        const std::uint32_t k2 = window_key<K>(q[u].z), k3 = window_key<K>(q[u].w);
        const bool i0 = fast(k0, ok), i1 = fast(k1, ok), i2 = fast(k2, ok), i3 = fast(k3, ok);
        if (__any_sync(kFullMask, i0 | i1 | i2 | i3)) {
          if (kEq && __all_sync(kFullMask, (!i0 || k0 == b1) && (!i1 || k1 == b1) && (!i2 || k2 == b1) &&
                                                   (!i3 || k3 == b1))) {
            seg_bytes += (static_cast<unsigned>(i0) + static_cast<unsigned>(i1) + static_cast<unsigned>(i2) +
                          static_cast<unsigned>(i3))
                         << 16;
            continue;
          }
          const unsigned r0 = slow(k0, i0, seg_bytes), r1 = slow(k1, i1, seg_bytes);
          const unsigned r2 = slow(k2, i2, seg_bytes), r3 = slow(k3, i3, seg_bytes);
          if (__any_sync(kFullMask, (r0 | r1 | r2 | r3) != kRegionNone)) {
            st.push(r0, composite(k0, static_cast<std::uint32_t>(4 * v)));
            st.push(r1, composite(k1, static_cast<std::uint32_t>(4 * v + 1)));
            st.push(r2, composite(k2, static_cast<std::uint32_t>(4 * v + 2)));
            st.push(r3, composite(k3, static_cast<std::uint32_t>(4 * v + 3)));
          }
        }
      }
      add_segments(seg_bytes);
      if (ties_out) {  // every vector tile once, zero included
        const unsigned ties = __reduce_add_sync(kFullMask, (seg_bytes >> 16) & 0xFFu);
        if (ln == 0) ties_out[base / kTile] = ties;
      }
    }
  };
  if (eq_fast)
    tiles(std::true_type{});
  else
    tiles(std::false_type{});
  // The tail (fewer than four elements when aligned; everything when not) is the last tile.
  for (std::size_t base = n_vec * 4 + warp * 32; base < n; base += n_warps * 32) {
    const std::size_t i = base + static_cast<std::size_t>(ln);
    const bool ok = i < n;
    const std::uint32_t key = window_key<K>(ok ? __float_as_uint(__ldcs(p.in + i)) : 0u);
    const bool inside = fast(key, ok);
    unsigned seg_bytes = 0;
    if (__any_sync(kFullMask, inside)) st.push(slow(key, inside, seg_bytes), composite(key, static_cast<std::uint32_t>(i)));
    add_segments(seg_bytes);
    if (ties_out) {
      const unsigned ties = __reduce_add_sync(kFullMask, (seg_bytes >> 16) & 0xFFu);
      if (ln == 0 && ties) atomicAdd(&ties_out[p.n_tiles - 1], ties);
    }
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

// One wave of the pass (per device: batch workers).
template <WindowKey K>
int pass_grid() {
  static cuda::PerDeviceInt cache{};
  return cuda::one_wave_grid(cache, window_pass_kernel<K>, kPassThreads);
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

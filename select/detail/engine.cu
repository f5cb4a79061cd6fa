// Kernels shared by the GPU selection backends. Passes over the input stream it once with
// 16-byte loads (when aligned) and warp-uniform loops, so that the warp-aggregated appends
// (ballot + one atomic per warp, Ribizel & Anzt's "warp aggregation") always see every lane.

#include <cub/cub.cuh>

#include <array>
#include <vector>

#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/detail/bitonic_sort.hpp"
#include "select/detail/engine.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::select::detail {
namespace {

constexpr int kThreads = 256;
// Calls f(x, index, valid) for every element, in warp-uniform steps (padding lanes get
// valid = false), so that f may use warp collectives. Each lane issues kUnroll 16-byte loads
// before it uses the first, to keep enough bytes in flight to stream at full bandwidth.
constexpr int kUnroll = 4;

template <class F>
__device__ __forceinline__ F for_each_element(const float* in, std::size_t n, F f) {
  const int lane = lane_id();
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(in) & 15u) == 0;
  const std::size_t n_vec = aligned ? n / 4 : 0;
  const float4* in4 = reinterpret_cast<const float4*>(in);
  constexpr std::size_t kTile = 32 * kUnroll;
  for (std::size_t base = warp * kTile; base < n_vec; base += n_warps * kTile) {
    float4 q[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = base + static_cast<std::size_t>(u * 32 + lane);
      q[u] = v < n_vec ? __ldcs(in4 + v) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = base + static_cast<std::size_t>(u * 32 + lane);
      const bool ok = v < n_vec;
      f(q[u].x, 4 * v, ok);
      f(q[u].y, 4 * v + 1, ok);
      f(q[u].z, 4 * v + 2, ok);
      f(q[u].w, 4 * v + 3, ok);
    }
  }
  for (std::size_t base = n_vec * 4 + warp * 32; base < n; base += n_warps * 32) {
    const std::size_t i = base + static_cast<std::size_t>(lane);
    const bool ok = i < n;
    f(ok ? __ldcs(in + i) : 0.0f, i, ok);
  }
  return f;
}

__global__ void sample_keys_kernel(const float* in, std::size_t n, KeyMode mode, std::uint64_t seed,
                                   std::uint32_t* out, std::size_t count) {
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < count;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix64(seed + 0x9E3779B97F4A7C15ull * (j + 1));
    out[j] = rank_key(__ldg(in + (h % n)), mode);
  }
}

// Segments of few bounds (<= 3) keep their counts in registers; many bounds use a shared
// histogram and a binary search over the bounds in shared memory.
// The per-element work of a segment pass. A value type, so that its counters stay in registers.
template <bool kFew, KeyMode kMode>
struct SegmentBody {
  bool saving;
  int n_bounds;
  std::uint32_t b0, b1, b2;  // the bounds when kFew
  const std::uint32_t* s_bounds;
  unsigned* s_hist;
  const std::uint8_t* s_regions;
  std::uint64_t *buf_a, *buf_b;
  unsigned long long cap_a, cap_b;
  unsigned long long* fill;
  std::uint16_t* oracles;
  const std::uint32_t* s_lo;    // projection intervals in shared memory, or null
  const float* s_slope;
  int intervals, per_interval;
  std::uint8_t r0, r1, r2, r3;  // regions of the segments when kFew
  unsigned c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  bool room_a = true, room_b = true;

  __device__ __forceinline__ void operator()(float x, std::size_t index, bool valid) {
    const std::uint32_t key = rank_key(x, kMode);
    int seg;
    if constexpr (kFew) {
      seg = (n_bounds > 0 && b0 <= key) + (n_bounds > 1 && b1 <= key) + (n_bounds > 2 && b2 <= key);
      if (valid) {
        c0 += seg == 0;
        c1 += seg == 1;
        c2 += seg == 2;
        c3 += seg == 3;
      }
    } else if (s_lo) {
      if (key == kInvalidKey) {
        seg = intervals * per_interval;
      } else {
        int lo = 0, hi = intervals;  // the last interval whose lower bound is <= key
        while (lo < hi) {
          const int mid = (lo + hi) >> 1;
          if (s_lo[mid] <= key) lo = mid + 1; else hi = mid;
        }
        const int i = max(lo - 1, 0);
        const float local = static_cast<float>(key - s_lo[i]) * s_slope[i];
        seg = i * per_interval + min(per_interval - 1, static_cast<int>(local));
      }
      warp_histogram_add(s_hist, seg, valid);
    } else {
      int lo = 0, hi = n_bounds;
      while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (s_bounds[mid] <= key) lo = mid + 1; else hi = mid;
      }
      seg = lo;
      warp_histogram_add(s_hist, seg, valid);
    }
    if (saving) {
      std::uint8_t r = kRegionNone;
      if (valid) {
        if constexpr (kFew) r = seg == 0 ? r0 : seg == 1 ? r1 : seg == 2 ? r2 : r3;
        else r = s_regions[seg];
      }
      // Most elements are saved nowhere: one vote skips both appends.
      if (__any_sync(kFullMask, r != kRegionNone)) {
        const std::uint64_t c = composite(key, static_cast<std::uint32_t>(index));
        warp_append(r == kRegionA, c, buf_a, cap_a, &fill[0], room_a);
        warp_append(r == kRegionB, c, buf_b, cap_b, &fill[1], room_b);
      }
    }
    if (oracles && valid) oracles[index] = static_cast<std::uint16_t>(seg);
  }
};

// The segment pass for at most three bounds (the randomized window, a filter pass, or a count of
// the valid keys), on whole float4 groups: bit-level keys, one warp vote per four elements
// before any append, and the segment counts packed as 16-bit fields of one register (a thread
// sees fewer than 2^16 elements: the grid has over 2^18 threads and n < 2^34).
template <KeyMode kMode>
__global__ void __launch_bounds__(kThreads) few_pass_kernel(const SegmentPass p) {
  __shared__ unsigned s_hist[4];
  if (threadIdx.x < 4) s_hist[threadIdx.x] = 0;
  const int nb = p.n_bounds;
  const std::uint32_t b0 = nb > 0 ? p.bounds[0] : 0xFFFFFFFFu;
  const std::uint32_t b1 = nb > 1 ? p.bounds[1] : 0xFFFFFFFFu;
  const std::uint32_t b2 = nb > 2 ? p.bounds[2] : 0xFFFFFFFFu;
  const std::uint8_t* dev = p.regions;
  const std::uint8_t r0 = dev ? dev[0] : p.inline_regions[0];
  const std::uint8_t r1 = dev ? (nb > 0 ? dev[1] : kRegionNone) : p.inline_regions[1];
  const std::uint8_t r2 = dev ? (nb > 1 ? dev[2] : kRegionNone) : p.inline_regions[2];
  const std::uint8_t r3 = dev ? (nb > 2 ? dev[3] : kRegionNone) : p.inline_regions[3];
  const bool saving = (r0 | r1 | r2 | r3) != kRegionNone;
  std::uint64_t* const buf_a = p.buf_a;
  std::uint64_t* const buf_b = p.buf_b;
  const unsigned long long cap_a = p.cap_a, cap_b = p.cap_b;
  unsigned long long* const fill = p.fill;
  bool room_a = true, room_b = true;
  __syncthreads();

  // Segment = number of bounds <= key. Unused bounds are 0xFFFFFFFF, reached only by NaN keys;
  // a NaN key beyond the last real bound is counted as that segment below.
  auto segment = [=](std::uint32_t key) {
    return static_cast<int>(b0 <= key) + static_cast<int>(b1 <= key) + static_cast<int>(b2 <= key);
  };
  auto region = [=](int seg) { return seg == 0 ? r0 : seg == 1 ? r1 : seg == 2 ? r2 : r3; };
  std::uint64_t packed = 0;  // 16-bit count per segment

  const int lane = lane_id();
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(p.in) & 15u) == 0;
  const std::size_t n = p.n;
  const std::size_t n_vec = aligned ? n / 4 : 0;
  const uint4* in4 = reinterpret_cast<const uint4*>(p.in);
  constexpr std::size_t kTile = 32 * kUnroll;
  for (std::size_t base = warp * kTile; base < n_vec; base += n_warps * kTile) {
    uint4 q[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = base + static_cast<std::size_t>(u * 32 + lane);
      q[u] = v < n_vec ? __ldcs(in4 + v) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = base + static_cast<std::size_t>(u * 32 + lane);
      const bool ok = v < n_vec;
      const std::uint32_t k[4] = {rank_key_bits<kMode>(q[u].x), rank_key_bits<kMode>(q[u].y),
                                  rank_key_bits<kMode>(q[u].z), rank_key_bits<kMode>(q[u].w)};
      const int sg[4] = {segment(k[0]), segment(k[1]), segment(k[2]), segment(k[3])};
      if (ok) {
#pragma unroll
        for (int j = 0; j < 4; ++j) packed += 1ull << (16 * sg[j]);
      }
      if (saving) {
        std::uint8_t r[4] = {kRegionNone, kRegionNone, kRegionNone, kRegionNone};
        if (ok) {
#pragma unroll
          for (int j = 0; j < 4; ++j) r[j] = region(sg[j]);
        }
        if (__any_sync(kFullMask, (r[0] | r[1] | r[2] | r[3]) != kRegionNone)) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const std::uint64_t c = composite(k[j], static_cast<std::uint32_t>(4 * v + j));
            warp_append(r[j] == kRegionA, c, buf_a, cap_a, &fill[0], room_a);
            warp_append(r[j] == kRegionB, c, buf_b, cap_b, &fill[1], room_b);
          }
        }
      }
    }
  }
  for (std::size_t b = n_vec * 4 + warp * 32; b < n; b += n_warps * 32) {
    const std::size_t i = b + static_cast<std::size_t>(lane);
    const bool ok = i < n;
    const std::uint32_t key = rank_key_bits<kMode>(ok ? __float_as_uint(__ldcs(p.in + i)) : 0u);
    const int sg = segment(key);
    if (ok) packed += 1ull << (16 * sg);
    if (saving) {
      const std::uint8_t r = ok ? region(sg) : kRegionNone;
      const std::uint64_t c = composite(key, static_cast<std::uint32_t>(i));
      warp_append(r == kRegionA, c, buf_a, cap_a, &fill[0], room_a);
      warp_append(r == kRegionB, c, buf_b, cap_b, &fill[1], room_b);
    }
  }
  // Segments past n_bounds (NaN keys beyond the last real bound) belong to the last one.
  unsigned c[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) c[j] = __reduce_add_sync(kFullMask, static_cast<unsigned>((packed >> (16 * j)) & 0xFFFFu));
  if (lane == 0) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (c[j]) atomicAdd(&s_hist[min(j, nb)], c[j]);
  }
  __syncthreads();
  if (threadIdx.x <= nb && s_hist[threadIdx.x])
    atomicAdd(&p.counts[threadIdx.x], static_cast<unsigned long long>(s_hist[threadIdx.x]));
}

template <bool kFew, KeyMode kMode>
__global__ void __launch_bounds__(kThreads) segment_pass_kernel(const SegmentPass p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int n_bounds = p.projection ? 0 : p.n_bounds;
  const int n_seg = p.projection ? p.n_projection_buckets : n_bounds + 1;
  __shared__ std::uint32_t s_lo[kMaxIntervals];
  __shared__ float s_slope[kMaxIntervals];
  if (p.projection) {
    for (int i = threadIdx.x; i < p.projection->intervals; i += blockDim.x) {
      s_lo[i] = p.projection->lo[i];
      s_slope[i] = p.projection->slope[i];
    }
  }
  std::uint32_t* s_bounds = reinterpret_cast<std::uint32_t*>(smem);
  unsigned* s_hist = reinterpret_cast<unsigned*>(s_bounds + n_bounds);
  std::uint8_t* s_regions = reinterpret_cast<std::uint8_t*>(s_hist + n_seg);
  for (int i = threadIdx.x; i < n_bounds; i += blockDim.x) s_bounds[i] = p.bounds[i];
  // Constant indices only: a run-time index into the parameter struct would copy it to local memory.
  const std::uint8_t* dev = p.regions;
  const std::uint8_t r0 = dev ? dev[0] : p.inline_regions[0];
  const std::uint8_t r1 = dev ? (n_seg > 1 ? dev[1] : kRegionNone) : p.inline_regions[1];
  const std::uint8_t r2 = dev ? (n_seg > 2 ? dev[2] : kRegionNone) : p.inline_regions[2];
  const std::uint8_t r3 = dev ? (n_seg > 3 ? dev[3] : kRegionNone) : p.inline_regions[3];
  for (int i = threadIdx.x; i < n_seg; i += blockDim.x) {
    s_hist[i] = 0;
    s_regions[i] = dev ? dev[i] : i == 0 ? r0 : i == 1 ? r1 : i == 2 ? r2 : i == 3 ? r3 : kRegionNone;
  }
  __syncthreads();
  SegmentBody<kFew, kMode> body;
  body.r0 = r0;
  body.r1 = r1;
  body.r2 = r2;
  body.r3 = r3;
  body.saving = p.regions != nullptr || (r0 | r1 | r2 | r3);
  body.n_bounds = n_bounds;
  body.b0 = kFew && n_bounds > 0 ? s_bounds[0] : 0u;
  body.b1 = kFew && n_bounds > 1 ? s_bounds[1] : 0u;
  body.b2 = kFew && n_bounds > 2 ? s_bounds[2] : 0u;
  body.s_bounds = s_bounds;
  body.s_hist = s_hist;
  body.s_regions = s_regions;
  body.buf_a = p.buf_a;
  body.buf_b = p.buf_b;
  body.cap_a = p.cap_a;
  body.cap_b = p.cap_b;
  body.fill = p.fill;
  body.oracles = p.oracles;
  body.s_lo = p.projection ? s_lo : nullptr;
  body.s_slope = s_slope;
  body.intervals = p.projection ? p.projection->intervals : 0;
  body.per_interval = p.projection ? p.projection->per_interval : 0;
  body = for_each_element(p.in, p.n, body);

  if constexpr (kFew) {
    const unsigned w0 = __reduce_add_sync(kFullMask, body.c0), w1 = __reduce_add_sync(kFullMask, body.c1);
    const unsigned w2 = __reduce_add_sync(kFullMask, body.c2), w3 = __reduce_add_sync(kFullMask, body.c3);
    if (lane_id() == 0) {
      if (w0) atomicAdd(&s_hist[0], w0);
      if (w1 && n_seg > 1) atomicAdd(&s_hist[1], w1);
      if (w2 && n_seg > 2) atomicAdd(&s_hist[2], w2);
      if (w3 && n_seg > 3) atomicAdd(&s_hist[3], w3);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n_seg; i += blockDim.x)
    if (s_hist[i]) atomicAdd(&p.counts[i], static_cast<unsigned long long>(s_hist[i]));
}

__global__ void oracle_filter_kernel(const float* in, std::size_t n, KeyMode mode, const std::uint16_t* oracles,
                                     const std::uint8_t* regions, int n_segments, std::uint64_t* buf_b,
                                     unsigned long long cap_b, unsigned long long* fill_b) {
  extern __shared__ std::uint8_t s_regions[];
  for (int i = threadIdx.x; i < n_segments; i += blockDim.x) s_regions[i] = regions[i];
  __syncthreads();
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  bool room = true;
  for (std::size_t base = warp * 32; base < n; base += n_warps * 32) {
    const std::size_t i = base + static_cast<std::size_t>(lane_id());
    const bool ok = i < n;
    const bool want = ok && s_regions[__ldcs(oracles + i)] == kRegionB;
    const std::uint32_t key = want ? rank_key(__ldg(in + i), mode) : 0u;
    warp_append(want, composite(key, static_cast<std::uint32_t>(i)), buf_b, cap_b, fill_b, room);
  }
}

struct RadixBody {
  KeyMode mode;
  std::uint32_t prefix, mask;
  int shift;
  unsigned digit_mask;
  unsigned* s_hist;
  __device__ __forceinline__ void operator()(float x, std::size_t, bool valid) {
    const std::uint32_t key = rank_key(x, mode);
    const bool match = valid && (key & mask) == prefix;
    warp_histogram_add(s_hist, static_cast<int>((key >> shift) & digit_mask), match);
  }
};

__global__ void radix_hist_kernel(const float* in, std::size_t n, KeyMode mode, std::uint32_t prefix,
                                  std::uint32_t mask, int shift, unsigned digit_mask, unsigned long long* hist) {
  __shared__ unsigned s_hist[2048];
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) s_hist[i] = 0;
  __syncthreads();
  for_each_element(in, n, RadixBody{mode, prefix, mask, shift, digit_mask, s_hist});
  __syncthreads();
  for (int i = threadIdx.x; i <= static_cast<int>(digit_mask); i += blockDim.x)
    if (s_hist[i]) atomicAdd(&hist[i], static_cast<unsigned long long>(s_hist[i]));
}

struct ObjectiveBody {
  KeyMode mode;
  std::uint32_t t;
  unsigned long long below = 0, equal = 0, valid = 0;
  double above_sum = 0.0, below_sum = 0.0, total = 0.0;
  __device__ __forceinline__ void operator()(float x, std::size_t, bool ok) {
    const std::uint32_t key = rank_key(x, mode);
    if (!ok || key == kInvalidKey) return;
    ++valid;
    total += static_cast<double>(key);
    if (key < t) {
      ++below;
      below_sum += static_cast<double>(t - key);
    } else if (key == t) {
      ++equal;
    } else {
      above_sum += static_cast<double>(key - t);
    }
  }
};

__global__ void __launch_bounds__(kThreads) objective_kernel(const float* in, std::size_t n, KeyMode mode,
                                                             std::uint32_t t, unsigned long long* counts,
                                                             double* sums) {
  ObjectiveBody b{mode, t};
  b = for_each_element(in, n, b);
  using ReduceU = cub::BlockReduce<unsigned long long, kThreads>;
  using ReduceD = cub::BlockReduce<double, kThreads>;
  __shared__ union {
    typename ReduceU::TempStorage u;
    typename ReduceD::TempStorage d;
  } temp;
  const unsigned long long cu[3] = {b.below, b.equal, b.valid};
  const double cd[3] = {b.above_sum, b.below_sum, b.total};
  for (int j = 0; j < 3; ++j) {
    const unsigned long long v = ReduceU(temp.u).Sum(cu[j]);
    __syncthreads();
    if (threadIdx.x == 0 && v) atomicAdd(&counts[j], v);
  }
  for (int j = 0; j < 3; ++j) {
    const double v = ReduceD(temp.d).Sum(cd[j]);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&sums[j], v);
  }
}

constexpr int kExtractPerThread = 64;
constexpr std::size_t kExtractChunk = static_cast<std::size_t>(kThreads) * kExtractPerThread;

__global__ void __launch_bounds__(kThreads) tie_count_kernel(const float* in, std::size_t n, KeyMode mode,
                                                             std::uint32_t tie, unsigned long long* counts) {
  using BlockReduce = cub::BlockReduce<unsigned, kThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const std::size_t start = static_cast<std::size_t>(blockIdx.x) * kExtractChunk;
  const std::size_t end = min(start + kExtractChunk, n);
  unsigned c = 0;
  for (std::size_t i = start + threadIdx.x; i < end; i += kThreads) c += rank_key(__ldg(in + i), mode) == tie;
  const unsigned total = BlockReduce(temp).Sum(c);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// Each warp owns a contiguous slice of the block's chunk and walks it in coalesced rows of 32;
// a ballot ranks the ties of a row in index order, and the warps' tie counts are scanned in
// shared memory, so every tie gets its rank in index order across the whole input.
__global__ void __launch_bounds__(kThreads) extract_kernel(const float* in, std::size_t n, KeyMode mode,
                                                           std::uint32_t tie, unsigned long long less,
                                                           unsigned long long need, const unsigned long long* tie_offsets,
                                                           unsigned long long* below_fill, std::uint64_t* out) {
  constexpr int kWarps = kThreads / 32;
  constexpr std::size_t kSlice = kExtractChunk / kWarps;
  __shared__ unsigned s_warp_ties[kWarps];
  const int lane = lane_id();
  const int w = static_cast<int>(threadIdx.x >> 5);
  const std::size_t start = static_cast<std::size_t>(blockIdx.x) * kExtractChunk + static_cast<std::size_t>(w) * kSlice;
  const std::size_t end = min(start + kSlice, n);
  unsigned mine = 0;
  for (std::size_t row = start; row < end; row += 32) {
    const std::size_t i = row + static_cast<std::size_t>(lane);
    const bool is_tie = i < end && rank_key(__ldg(in + i), mode) == tie;
    mine += __popc(__ballot_sync(kFullMask, is_tie));
  }
  if (lane == 0) s_warp_ties[w] = mine;
  __syncthreads();
  unsigned long long rank = tie_offsets[blockIdx.x];
  for (int j = 0; j < w; ++j) rank += s_warp_ties[j];
  if (rank >= need && less == 0) return;  // nothing left to write in this slice
  bool room = true;
  for (std::size_t row = start; row < end; row += 32) {
    const std::size_t i = row + static_cast<std::size_t>(lane);
    const std::uint32_t key = i < end ? rank_key(__ldg(in + i), mode) : kInvalidKey;
    const bool is_tie = i < end && key == tie;
    const unsigned ties = __ballot_sync(kFullMask, is_tie);
    if (is_tie) {
      const unsigned long long r = rank + static_cast<unsigned>(__popc(ties & ((1u << lane) - 1u)));
      if (r < need) out[less + r] = composite(key, static_cast<std::uint32_t>(i));
    }
    rank += static_cast<unsigned>(__popc(ties));
    warp_append(i < end && key < tie, composite(key, static_cast<std::uint32_t>(i)), out, less, below_fill, room);
  }
}

__global__ void write_top_k_kernel(const float* in, const std::uint64_t* a, std::size_t na, const std::uint64_t* b,
                                   std::size_t nb, float* out_values, std::uint32_t* out_indices) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < na + nb;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t index = composite_index(i < na ? a[i] : b[i - na]);
    out_indices[i] = index;
    out_values[i] = in[index];
  }
}

__global__ void gather_keys_kernel(const void* sorted, bool composites, const unsigned long long* pos,
                                   std::size_t count, std::uint32_t* out) {
  // Grid-stride: small_grid() caps the grid at 4096 blocks, fewer threads than ranks above 2^20.
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = composites ? composite_key(static_cast<const std::uint64_t*>(sorted)[pos[i]])
                        : static_cast<const std::uint32_t*>(sorted)[pos[i]];
  }
}

int small_grid(std::size_t count) {
  return static_cast<int>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 4096));
}

}  // namespace

int streaming_blocks() { return cuda::sm_count() * 8; }

void sample_keys(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, std::uint64_t seed,
                 std::uint32_t* out, std::size_t count) {
  if (count == 0 || n == 0) return;
  sample_keys_kernel<<<small_grid(count), kThreads, 0, stream>>>(in, n, mode, seed, out, count);
  GPUCLEAN_CHECK_LAUNCH();
}

std::size_t sort_temp_bytes_u32(std::size_t count) {
  std::size_t bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                                   static_cast<std::uint32_t*>(nullptr), count));
  return bytes;
}

std::size_t sort_temp_bytes_u64(std::size_t count) {
  std::size_t bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
                                                   static_cast<std::uint64_t*>(nullptr), count));
  return bytes;
}

void sort_u32(cudaStream_t stream, void* temp, std::size_t temp_bytes, const std::uint32_t* in, std::uint32_t* out,
              std::size_t count) {
  if (count == 0) return;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, count, 0, 32, stream));
}

void sort_u64(cudaStream_t stream, void* temp, std::size_t temp_bytes, const std::uint64_t* in, std::uint64_t* out,
              std::size_t count, int begin_bit) {
  if (count == 0) return;
  if (count <= kBitonicMax) return bitonic_sort_u64(stream, in, out, count);  // a full sort is also a key sort
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, count, begin_bit, 64, stream));
}

namespace {
template <KeyMode kMode>
void launch_segment_pass(cudaStream_t stream, const SegmentPass& p, std::size_t smem) {
  if (p.n_bounds <= 3 && !p.oracles && !p.projection) {
    few_pass_kernel<kMode><<<streaming_blocks(), kThreads, 0, stream>>>(p);
  } else if (p.n_bounds <= 3 && !p.projection) {
    segment_pass_kernel<true, kMode><<<streaming_blocks(), kThreads, smem, stream>>>(p);
  } else {
    static cuda::PerDeviceOnce configured;  // the attribute is per device
    cuda::once_per_device(configured, [] {
      GPUCLEAN_CUDA_TRY(cudaFuncSetAttribute(segment_pass_kernel<false, kMode>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024));
    });
    segment_pass_kernel<false, kMode><<<streaming_blocks(), kThreads, smem, stream>>>(p);
  }
}
}  // namespace

void segment_pass(cudaStream_t stream, const SegmentPass& p) {
  const int n_seg = p.projection ? p.n_projection_buckets : p.n_bounds + 1;
  if (p.n_bounds < 0 || n_seg > kMaxBounds + 1) throw std::logic_error("segment_pass: too many segments");
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(p.counts, 0, sizeof(unsigned long long) * n_seg, stream));
  if (p.fill) GPUCLEAN_CUDA_TRY(cudaMemsetAsync(p.fill, 0, 2 * sizeof(unsigned long long), stream));
  if (p.n == 0) return;
  const int nb = p.projection ? 0 : p.n_bounds;
  const std::size_t smem = static_cast<std::size_t>(nb) * 4 + static_cast<std::size_t>(n_seg) * 5 + 16;
  switch (p.mode) {
    case KeyMode::kLargest: launch_segment_pass<KeyMode::kLargest>(stream, p, smem); break;
    case KeyMode::kSmallest: launch_segment_pass<KeyMode::kSmallest>(stream, p, smem); break;
    case KeyMode::kLargestAbs: launch_segment_pass<KeyMode::kLargestAbs>(stream, p, smem); break;
  }
  GPUCLEAN_CHECK_LAUNCH();
}

void oracle_filter(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, const std::uint16_t* oracles,
                   const std::uint8_t* regions, int n_segments, std::uint64_t* buf_b, unsigned long long cap_b,
                   unsigned long long* fill_b) {
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(fill_b, 0, sizeof(unsigned long long), stream));
  if (n == 0) return;
  oracle_filter_kernel<<<streaming_blocks(), kThreads, static_cast<std::size_t>(n_segments), stream>>>(
      in, n, mode, oracles, regions, n_segments, buf_b, cap_b, fill_b);
  GPUCLEAN_CHECK_LAUNCH();
}

std::size_t radix_threshold_bytes() { return 2048 * sizeof(unsigned long long) + 256; }

Threshold radix_threshold(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, unsigned long long k,
                          Arena& arena) {
  auto* d_hist = arena.take<unsigned long long>(2048);
  std::vector<unsigned long long> hist(2048);
  // Digits of 11, 11 and 10 bits, most significant first.
  constexpr std::array<int, 3> kShift = {21, 10, 0};
  constexpr std::array<unsigned, 3> kDigits = {2048, 2048, 1024};
  Threshold t;
  if (k == 0 || k > n) return t;
  std::uint32_t prefix = 0, mask = 0;
  unsigned long long rank = k;  // 1-based rank among the keys that share the prefix
  for (int pass = 0; pass < 3; ++pass) {
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(d_hist, 0, sizeof(unsigned long long) * kDigits[pass], stream));
    radix_hist_kernel<<<streaming_blocks(), kThreads, 0, stream>>>(in, n, mode, prefix, mask, kShift[pass],
                                                                   kDigits[pass] - 1, d_hist);
    GPUCLEAN_CHECK_LAUNCH();
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(hist.data(), d_hist, sizeof(unsigned long long) * kDigits[pass],
                                      cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    unsigned long long below = 0;
    unsigned d = 0;
    for (; d + 1 < kDigits[pass] && below + hist[d] < rank; ++d) below += hist[d];
    t.less += below;
    rank -= below;
    prefix |= d << kShift[pass];
    mask |= (kDigits[pass] - 1) << kShift[pass];
  }
  t.key = prefix;
  return t;
}

std::size_t objective_bytes() { return 2 * 256; }

ObjectiveTerms objective_pass(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, std::uint32_t t,
                              Arena& arena) {
  auto* counts = arena.take<unsigned long long>(3);
  auto* sums = arena.take<double>(3);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(counts, 0, 3 * sizeof(unsigned long long), stream));
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(sums, 0, 3 * sizeof(double), stream));
  ObjectiveTerms r;
  if (n > 0) {
    objective_kernel<<<streaming_blocks(), kThreads, 0, stream>>>(in, n, mode, t, counts, sums);
    GPUCLEAN_CHECK_LAUNCH();
  }
  unsigned long long hc[3];
  double hs[3];
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(hc, counts, sizeof hc, cudaMemcpyDeviceToHost, stream));
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(hs, sums, sizeof hs, cudaMemcpyDeviceToHost, stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  r.below = hc[0];
  r.equal = hc[1];
  r.valid = hc[2];
  r.above_sum = hs[0];
  r.below_sum = hs[1];
  r.total = hs[2];
  return r;
}

std::size_t extract_bytes(std::size_t n) {
  const std::size_t chunks = (n + kExtractChunk - 1) / kExtractChunk + 1;
  std::size_t scan = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<unsigned long long*>(nullptr),
                                                  static_cast<unsigned long long*>(nullptr), chunks));
  return 2 * chunks * sizeof(unsigned long long) + scan + 4096;
}

void extract_with_threshold(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, Threshold t,
                            unsigned long long k, std::uint64_t* out, Arena& arena) {
  const std::size_t chunks = (n + kExtractChunk - 1) / kExtractChunk;
  auto* counts = arena.take<unsigned long long>(chunks + 1);
  auto* offsets = arena.take<unsigned long long>(chunks + 1);
  auto* fill = arena.take<unsigned long long>(1);
  std::size_t scan_bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, counts, offsets, chunks + 1));
  void* scan_temp = arena.take<std::byte>(scan_bytes);
  if (n == 0 || k == 0) return;
  tie_count_kernel<<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(in, n, mode, t.key, counts);
  GPUCLEAN_CHECK_LAUNCH();
  GPUCLEAN_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, counts, offsets, chunks, stream));
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(fill, 0, sizeof(unsigned long long), stream));
  extract_kernel<<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(in, n, mode, t.key, t.less, k - t.less,
                                                                         offsets, fill, out);
  GPUCLEAN_CHECK_LAUNCH();
}

void gather_keys(cudaStream_t stream, const void* sorted, bool composites, const unsigned long long* pos,
                 std::size_t count, std::uint32_t* out) {
  if (count == 0) return;
  gather_keys_kernel<<<small_grid(count), kThreads, 0, stream>>>(sorted, composites, pos, count, out);
  GPUCLEAN_CHECK_LAUNCH();
}

void write_top_k(cudaStream_t stream, const float* in, const std::uint64_t* a, std::size_t na, const std::uint64_t* b,
                 std::size_t nb, float* out_values, std::uint32_t* out_indices) {
  if (na + nb == 0) return;
  write_top_k_kernel<<<small_grid(na + nb), kThreads, 0, stream>>>(in, a, na, b, nb, out_values, out_indices);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::select::detail

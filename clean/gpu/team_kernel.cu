// Clark's minor cycle on every SM: see team_kernel.hpp and interaction_clusters.hpp. Every team
// subtracts with subtract_rn, so that it reproduces MinorCycleCpu bit for bit.

#include <algorithm>

#include "clean/gpu/subtract_rn.cuh"
#include "clean/gpu/team_common.cuh"
#include "clean/gpu/team_kernel.hpp"
#include "clean/gpu/warp_search.cuh"
#include "clean/packed_peak.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::clean::gpu {
namespace {

using cuda::kFullMask;
using cuda::warp_max64;
// 162 KB: a cluster of the default active set (20050 members) fits the row team's shared memory
// (8 bytes a member), and the 164 KB shared-memory configuration leaves 92 KB of L1 for the beam
// patch (40 KB at hw 50).
constexpr std::uint32_t kSharedBytes = 162 * 1024;
constexpr int kCarveoutPercent = 72;  // 164 of the SM's 228 KB
constexpr std::uint32_t kPerLane = kWarpTeamMax / 32;
static_assert(kPerLane * 32 == kWarpTeamMax, "warp teams hold whole rows of 32 members");

__device__ __forceinline__ std::uint32_t slot_of(unsigned long long packed) {
  return ~static_cast<std::uint32_t>(packed >> 1) & 0x7FFFFFFFu;
}

// A large cluster, cleaned by the whole block: the row team. Thread t owns the quads of members q = t, t + kBlock, ... (members 4q .. 4q + 3, so that a rescan reads them as float4); a component
// updates only the members in the patch rows (found in a row table, or by warp searches when
// the table does not fit), and a thread rescans its members only when its own best was among
// those changed. kShared: the members live in shared memory (up to team_shared_members()).
template <int kBlock, bool kShared>
__device__ void block_team(const TeamArgs& a, ClusterRange range, unsigned char* smem, BlockShared& sh,
                           std::uint32_t top) {
  const std::uint32_t t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::uint32_t m = range.y - range.x, m4 = (m + 3) & ~3u;
  const std::uint32_t ymin = a.xy[range.x] >> 16, rows = (a.xy[range.y - 1] >> 16) - ymin + 1;
  float* vals;
  const std::uint32_t* xy;
  std::uint32_t* row_start = nullptr;  // row_start[r]: the first member in row ymin + r; [rows] = m
  if constexpr (kShared) {
    vals = reinterpret_cast<float*>(smem);
    auto* xs = reinterpret_cast<std::uint32_t*>(smem) + m4;
    for (std::uint32_t j = t; j < m4; j += kBlock) {
      vals[j] = j < m ? a.values[range.x + j] : __int_as_float(0x7fffffff);  // NaN pads: never the best
      if (j < m) xs[j] = a.xy[range.x + j];
    }
    xy = xs;
    if (4ull * (m4 + m + rows + 1) <= a.shared_bytes) row_start = xs + m;
  } else {
    vals = a.values + range.x;
    xy = a.xy + range.x;
  }
  if (row_start) {
    for (std::uint32_t j = t; j < m; j += kBlock) {
      const std::uint32_t y = a.xy[range.x + j] >> 16;
      const std::uint32_t first = j == 0 ? ymin : (a.xy[range.x + j - 1] >> 16) + 1;
      for (std::uint32_t r = first; r <= y; ++r) row_start[r - ymin] = j;
    }
    if (t == 0) row_start[rows] = m;
  }
  __syncthreads();
  const bool abs_key = a.abs_key;
  auto rescan = [&]() {
    unsigned long long best = 0;
    for (std::uint32_t q = t; 4 * q < m; q += kBlock) {
      float4 v;
      if constexpr (kShared) {
        v = reinterpret_cast<const float4*>(vals)[q];
      } else {
        const std::uint32_t j = 4 * q;
        v = make_float4(vals[j], j + 1 < m ? vals[j + 1] : __int_as_float(0x7fffffff),
                        j + 2 < m ? vals[j + 2] : __int_as_float(0x7fffffff),
                        j + 3 < m ? vals[j + 3] : __int_as_float(0x7fffffff));
      }
      best = max(best, max(max(pack_slot(v.x, 4 * q, abs_key), pack_slot(v.y, 4 * q + 1, abs_key)),
                           max(pack_slot(v.z, 4 * q + 2, abs_key), pack_slot(v.w, 4 * q + 3, abs_key))));
    }
    return best;
  };
  unsigned long long local = rescan();

  const int hw = a.half_width, side = 2 * hw + 1;
  std::uint32_t made = 0;
  unsigned long long order = ~0ull;
  WarpRecords rec;  // warp 0: lane i buffers record i of the current group of 32
  bool room = true;  // warp 0: the pool took every flush so far, and the cutoff has not fired
  int buf = 0;
  while (true) {
    const unsigned long long wb = warp_max64(local);
    if (lane == 0) sh.best[buf][warp] = wb;
    if (t == 0) sh.stop[buf] = room ? 0u : 1u;
    __syncthreads();
    const unsigned long long best = warp_max64(lane < kBlock / 32 ? sh.best[buf][lane] : 0ull);
    const bool full = sh.stop[buf] != 0;
    buf ^= 1;
    UnpackedPeak p;
    if (!next_peak(a, best, full, made, abs_key, p)) break;
    const std::uint32_t slot = p.pixel;
    const std::uint32_t q = xy[slot];
    const int bx = static_cast<int>(q & 0xFFFFu), by = static_cast<int>(q >> 16);
    const float flux = take_component(a, top, bx, by, p, warp == 0, lane, rec, made, order, room);

    std::uint32_t lo, hi;
    if (row_start) {
      const int top = by - static_cast<int>(ymin);  // the component's row in the table
      lo = row_start[min(max(top - hw, 0), static_cast<int>(rows))];
      hi = row_start[min(top + hw + 1, static_cast<int>(rows))];
    } else {
      lo = warp_lower_bound(xy, m, static_cast<std::uint32_t>(max(by - hw, 0)) << 16, lane);
      const int past = by + hw + 1;  // the first row past the patch
      hi = past > 0xFFFF ? m : warp_lower_bound(xy, m, static_cast<std::uint32_t>(past) << 16, lane);
    }
    const std::uint32_t mine = local ? slot_of(local) : 0xFFFFFFFFu;
    bool hit = false;
    for (std::uint32_t q = (lo >> 2) + ((t - (lo >> 2)) & (kBlock - 1)); 4 * q < hi; q += kBlock) {
#pragma unroll
      for (std::uint32_t e = 0; e < 4; ++e) {
        const std::uint32_t j = 4 * q + e;
        if (j < lo || j >= hi) continue;
        const std::uint32_t qj = xy[j];
        const int dx = static_cast<int>(qj & 0xFFFFu) - bx;
        if (dx < -hw || dx > hw) continue;
        const int dy = static_cast<int>(qj >> 16) - by;
        const float v =
            subtract_rn(vals[j], member_flux(a, flux, qj), __ldg(a.patch + (dy + hw) * side + (dx + hw)));
        vals[j] = v;
        if (j == mine) hit = true;
        else local = max(local, pack_slot(v, j, abs_key));
      }
    }
    if (hit) local = rescan();
  }
  if (warp == 0 && room && (made & 31) != 0) rec.flush(a, top, made & 31, order, lane);
  if (t == 0) atomicMax(&a.counters->longest, made);
  __syncthreads();  // the next cluster reuses shared memory
}

// A small cluster, cleaned by one warp: lane l holds members l, l + 32, ... in registers, and
// every component rebuilds the lane's best from them (a full pass over at most 8 members).
__device__ void warp_team(const TeamArgs& a, ClusterRange range, std::uint32_t lane, std::uint32_t top) {
  const std::uint32_t m = range.y - range.x;
  const bool abs_key = a.abs_key;
  float v[kPerLane];
  std::uint32_t q[kPerLane];
  unsigned long long local = 0;
#pragma unroll
  for (std::uint32_t i = 0; i < kPerLane; ++i) {
    const std::uint32_t j = lane + 32 * i;
    v[i] = j < m ? a.values[range.x + j] : 0.0f;
    q[i] = j < m ? a.xy[range.x + j] : 0u;
    if (j < m) local = max(local, pack_slot(v[i], j, abs_key));
  }
  const int hw = a.half_width, side = 2 * hw + 1;
  std::uint32_t made = 0;
  unsigned long long order = ~0ull;
  WarpRecords rec;
  bool room = true;
  while (true) {
    const unsigned long long best = warp_max64(local);
    UnpackedPeak p;
    if (!next_peak(a, best, !room, made, abs_key, p)) break;
    const std::uint32_t slot = p.pixel, row = slot >> 5;
    std::uint32_t mq = 0;
#pragma unroll
    for (std::uint32_t i = 0; i < kPerLane; ++i) mq = i == row ? q[i] : mq;
    const std::uint32_t qq = __shfl_sync(kFullMask, mq, static_cast<int>(slot & 31));
    const int bx = static_cast<int>(qq & 0xFFFFu), by = static_cast<int>(qq >> 16);
    const float flux = take_component(a, top, bx, by, p, true, lane, rec, made, order, room);
    local = 0;
#pragma unroll
    for (std::uint32_t i = 0; i < kPerLane; ++i) {
      const std::uint32_t j = lane + 32 * i;
      if (j < m) {
        const int dx = static_cast<int>(q[i] & 0xFFFFu) - bx, dy = static_cast<int>(q[i] >> 16) - by;
        if (dx >= -hw && dx <= hw && dy >= -hw && dy <= hw)
          v[i] = subtract_rn(v[i], member_flux(a, flux, q[i]), __ldg(a.patch + (dy + hw) * side + (dx + hw)));
        local = max(local, pack_slot(v[i], j, abs_key));
      }
    }
  }
  if (room && (made & 31) != 0) rec.flush(a, top, made & 31, order, lane);
  if (lane == 0) atomicMax(&a.counters->longest, made);
}

// kBlock threads a block: the row team's width (kRowBlock, the one built).
template <int kBlock>
__global__ void __launch_bounds__(kBlock, 1) teams_kernel(const TeamArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ BlockShared sh;
  const unsigned int n_big = a.counters->n_big, n_small = a.counters->n_small;  // set by earlier kernels
  const std::uint32_t top = a.counters->peak_key >> kOrderShift;
  while (true) {
    if (threadIdx.x == 0) sh.item = atomicAdd(&a.counters->next_big, 1u);
    __syncthreads();
    const unsigned int item = sh.item;
    __syncthreads();
    if (item >= n_big) break;
    const ClusterRange r = a.big[item];
    if (r.y - r.x <= team_shared_members()) block_team<kBlock, true>(a, r, smem, sh, top);
    else block_team<kBlock, false>(a, r, smem, sh, top);
  }
  // Small clusters: first one per warp, spread over the blocks (cluster j to block j mod grid)
  // so that each SM runs as few chains as possible; then whatever is left, from a queue.
  const std::uint32_t lane = threadIdx.x & 31, warps = gridDim.x * (kBlock / 32);
  const std::uint32_t first = (threadIdx.x >> 5) * gridDim.x + blockIdx.x;
  if (first < n_small) warp_team(a, a.small[first], lane, top);
  while (true) {
    unsigned int j = 0;
    if (lane == 0) j = warps + atomicAdd(&a.counters->next_small, 1u);
    j = __shfl_sync(kFullMask, j, 0);
    if (j >= n_small) break;
    warp_team(a, a.small[j], lane, top);
  }
}

}  // namespace

__host__ __device__ std::uint32_t team_shared_members() { return (kSharedBytes / 4 - 3) / 2; }
std::uint32_t team_shared_bytes() { return kSharedBytes; }

int team_blocks() { return std::max(cuda::sm_count(), 1); }

void launch_teams(cudaStream_t s, const TeamArgs& a) {
  static cuda::PerDeviceOnce configured;
  cuda::once_per_device(configured, [] {
    GPUCLEAN_CUDA_TRY(cudaFuncSetAttribute(teams_kernel<kRowBlock>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kSharedBytes)));
    // Prefer the split that gives the block its shared memory and leaves the rest to L1, where
    // the beam patch lives.
    GPUCLEAN_CUDA_TRY(cudaFuncSetAttribute(teams_kernel<kRowBlock>,
                                           cudaFuncAttributePreferredSharedMemoryCarveout, kCarveoutPercent));
  });
  teams_kernel<kRowBlock><<<team_blocks(), kRowBlock, kSharedBytes, s>>>(a);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::clean::gpu

// See joined_kernels.hpp. Every product is rounded on its own (__fmul_rn), as the CPU computes.

#include <math_constants.h>

#include <algorithm>
#include <stdexcept>

#include "clean/gpu/budget_cutoff.cuh"
#include "clean/gpu/joined_kernels.hpp"
#include "clean/gpu/joined_team.cuh"
#include "clean/gpu/warp_search.cuh"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::clean::gpu {
namespace {

using cuda::warp_max64;
constexpr int kBlock = 256;  // the major cycle's kernels
// Per team: its members' keys, positions and row table, when they fit (24 062 members); the
// static JoinedShared takes the rest of the 227 KiB.
constexpr std::uint32_t kSharedBytes = 188 * 1024;
constexpr std::uint32_t kSharedMembers = (kSharedBytes / 4 - 3) / 2;

// A record with this bit is the team's last: the budget cutoff fired after it.
constexpr unsigned long long kLastRecord = 1ull << 63;

// The balanced update's list of the members within the patch, and their new plane values.
constexpr std::uint32_t kWindowMax = 1024;
constexpr std::uint32_t kScratchFloats = 4096;

struct JoinedShared {
  unsigned long long best[2][kTeamThreads / 32];  // double-buffered: one argmax barrier per round
  unsigned long long record[2];                   // the pool record of the component of that round
  unsigned int item;
  unsigned int window;                            // members listed this round
  std::uint32_t members[kWindowMax];
  float scratch[kScratchFloats];
  float value[kMaxPlanes];    // --fit-spectral-pol: the component's plane values, for the projection
  float flux[2][kMaxPlanes];  // the component's plane fluxes, kept a round for the pool
};

// One cluster's joined minor cycle. As the one-plane block team (team_kernel.cu): thread t owns
// members t, t + kTeamThreads, ... and keeps the best of their keys; a component updates only the
// members within the patch, found in its rows (from a row table, or warp searches when the members
// live in global memory), and a thread rescans its members only when its own best was among those
// changed. The members' plane values stay in global memory, each member's together (vals,
// member-major), as do each patch offset's plane values. The update is spread evenly: the owners
// list the members within the patch, every thread updates one (member, plane) pair, and each owner
// then sums its members' keys, the integrated values, from the new plane values in plane order, as
// the CPU does. Three barriers a component, each after one round trip to memory at most (before,
// a thread updated all the planes of every one of its members, and the barrier waited for the
// thread with the most).
template <bool kShared, bool kLogFit>
__device__ void joined_team(const JoinedTeamArgs& a, ClusterRange range, unsigned char* smem, JoinedShared& sh,
                            std::uint32_t top) {
  const std::uint32_t t = threadIdx.x, lane = t & 31, warp = t >> 5, base = range.x, m = range.y - range.x;
  const int np = a.planes, hw = a.half_width, side = 2 * hw + 1;
  const std::uint32_t ymin = a.xy[base] >> 16, rows = (a.xy[range.y - 1] >> 16) - ymin + 1;
  float* keys = a.keys + base;
  float* vals = a.vals + static_cast<std::size_t>(base) * np;
  const std::uint32_t* xy = a.xy + base;
  std::uint32_t* xs = nullptr;         // the shared copy of xy
  std::uint32_t* row_start = nullptr;  // row_start[r]: the first member in row ymin + r; [rows] = m
  if constexpr (kShared) {
    keys = reinterpret_cast<float*>(smem);
    xs = reinterpret_cast<std::uint32_t*>(smem) + m;
    xy = xs;
    if (4ull * (2ull * m + rows + 1) <= kSharedBytes) row_start = xs + m;
  }
  for (std::uint32_t j = t; j < m; j += kTeamThreads) {
    const std::uint32_t q = a.xy[base + j];
    const std::size_t src = a.member_of ? a.member_of[base + j] : base + j;
    for (int p = 0; p < np; ++p) vals[static_cast<std::size_t>(j) * np + p] = a.member_values[src * np + p];
    keys[j] = a.keys_in[base + j];
    if (xs) xs[j] = q;
    if (row_start) {
      const std::uint32_t y = q >> 16, first = j == 0 ? ymin : (a.xy[base + j - 1] >> 16) + 1;
      for (std::uint32_t r = first; r <= y; ++r) row_start[r - ymin] = j;
    }
  }
  if (row_start && t == 0) row_start[rows] = m;
  __syncthreads();
  const bool abs_key = a.abs_key;
  auto rescan = [&]() {
    unsigned long long best = 0;
    for (std::uint32_t j = t; j < m; j += kTeamThreads) best = max(best, pack_slot(keys[j], j, abs_key));
    return best;
  };
  unsigned long long local = rescan();

  std::uint32_t made = 0;
  unsigned long long order = ~0ull;
  int buf = 0;
  const std::uint32_t capacity = min(kWindowMax, kScratchFloats / static_cast<std::uint32_t>(np));
  if (t == 0) sh.window = 0;
  while (true) {
    const unsigned long long wb = warp_max64(local);
    if (lane == 0) sh.best[buf][warp] = wb;
    __syncthreads();
    // The previous component's plane fluxes go to its record (known now), or the pool is full.
    if (made > 0) {
      const unsigned long long r = sh.record[buf ^ 1];
      if (r == ~0ull) break;
      const unsigned long long at = r & ~kLastRecord;
      for (int p = t; p < np; p += kTeamThreads) a.rec_plane_flux[at * np + p] = sh.flux[buf ^ 1][p];
      if (r & kLastRecord) break;
    }
    const unsigned long long best = warp_max64(lane < kTeamThreads / 32 ? sh.best[buf][lane] : 0ull);
    if (best == 0 || made >= a.budget) break;
    const UnpackedPeak pk = unpack_peak(best, abs_key);
    if (!(static_cast<double>(pk.key) > a.limit)) break;
    const std::uint32_t slot = pk.pixel, q = xy[slot];
    const int bx = static_cast<int>(q & 0xFFFFu), by = static_cast<int>(q >> 16);
    const std::uint32_t pixel = static_cast<std::uint32_t>(by) * a.width + static_cast<std::uint32_t>(bx);
    float* flux = sh.flux[buf];
    order = min(order, pack_peak(pk.key, pixel, pk.value < 0.0f));
    component_fluxes<kLogFit>(a, vals + static_cast<std::size_t>(slot) * np, sh.value, flux);
    // The record's slot: its latency overlaps the update below.
    unsigned long long r = 0;
    if (t == 0) r = atomicAdd(&a.counters->records, 1ull);
    ++made;

    // The members within the patch: a thread takes every kTeamThreads-th member of the patch
    // rows and lists those within its columns, with one shared atomic for all of them.
    std::uint32_t lo, hi;
    if (row_start) {
      const int top_row = by - static_cast<int>(ymin);
      lo = row_start[min(max(top_row - hw, 0), static_cast<int>(rows))];
      hi = row_start[min(top_row + hw + 1, static_cast<int>(rows))];
    } else {
      lo = warp_lower_bound(xy, m, static_cast<std::uint32_t>(max(by - hw, 0)) << 16, lane);
      const int past = by + hw + 1;
      hi = past > 0xFFFF ? m : warp_lower_bound(xy, m, static_cast<std::uint32_t>(past) << 16, lane);
    }
    const std::uint32_t first = lo + ((t - lo) & (kTeamThreads - 1));
    const auto in_columns = [&](std::uint32_t j) {
      const int dx = static_cast<int>(xy[j] & 0xFFFFu) - bx;
      return dx >= -hw && dx <= hw;
    };
    std::uint32_t mine_in = 0;
    for (std::uint32_t j = first; j < hi; j += kTeamThreads) mine_in += in_columns(j) ? 1u : 0u;
    const std::uint32_t listed = mine_in ? atomicAdd(&sh.window, mine_in) : 0u;
    if (mine_in) {
      std::uint32_t s = listed;
      for (std::uint32_t j = first; j < hi; j += kTeamThreads)
        if (in_columns(j) && s < capacity) sh.members[s++] = j;
    }
    __syncthreads();
    // The update, balanced: one (member, plane) pair a thread, its value and its patch value
    // loaded together, the new value kept in shared memory for the member's key.
    const std::uint32_t listed_all = min(sh.window, capacity), pairs = listed_all * static_cast<std::uint32_t>(np);
    for (std::uint32_t i = t; i < pairs; i += kTeamThreads) {
      const std::uint32_t s = i / static_cast<std::uint32_t>(np), p = i - s * static_cast<std::uint32_t>(np);
      const std::uint32_t j = sh.members[s], qj = xy[j];
      const int dx = static_cast<int>(qj & 0xFFFFu) - bx, dy = static_cast<int>(qj >> 16) - by;
      const std::size_t at = (static_cast<std::size_t>(dy + hw) * side + (dx + hw)) * np + p;
      float* v = vals + static_cast<std::size_t>(j) * np + p;
      const float y = subtract_rn(*v, flux[p], __ldg(a.patches + at));
      *v = y;
      sh.scratch[i] = y;
    }
    __syncthreads();
    // Each owner makes the keys of its listed members (in plane order, as the CPU sums them);
    // members past the list's capacity (a dense window) it updates whole, as before.
    const std::uint32_t mine = local ? slot_of(local) : 0xFFFFFFFFu;
    bool hit = false;
    if (mine_in) {
      std::uint32_t s = listed;
      for (std::uint32_t j = first; j < hi; j += kTeamThreads) {
        if (!in_columns(j)) continue;
        const std::uint32_t qj = xy[j];
        float key;
        if (s < capacity) {
          key = member_key(a, sh.scratch + s * static_cast<std::uint32_t>(np), qj);
        } else {
          const int dx = static_cast<int>(qj & 0xFFFFu) - bx, dy = static_cast<int>(qj >> 16) - by;
          const std::size_t at = (static_cast<std::size_t>(dy + hw) * side + (dx + hw)) * np;
          key = update_member(a, vals + static_cast<std::size_t>(j) * np, a.patches + at, flux, qj);
        }
        ++s;
        keys[j] = key;
        if (j == mine) hit = true;
        else local = max(local, pack_slot(key, j, abs_key));
      }
    }
    if (hit) local = rescan();
    // Every 32 components, once the pool holds the budget: the budget cutoff (budget_cutoff.cuh).
    bool last = false;
    if (warp == 0 && (made & 31) == 0 && __shfl_sync(cuda::kFullMask, r + 1 >= a.budget, 0))
      last = past_budget(a.order_bins, top, order, a.budget, lane);
    if (t == 0) {
      sh.window = 0;  // read by every thread before the last barrier
      if (r >= a.pool_capacity) {
        atomicExch(&a.counters->overflow, 1u);  // the host reruns the cycle with a larger pool
        sh.record[buf] = ~0ull;
      } else {
        sh.record[buf] = last ? r | kLastRecord : r;
        a.rec_pixel[r] = pixel;
        a.rec_flux[r] = integrated_flux(a, flux);
        a.rec_order[r] = order;
        count_order(a.order_bins, top, order);
      }
    }
    buf ^= 1;
  }
  __syncthreads();
  // The last component's plane fluxes, when the loop ended on another reason.
  if (made > 0 && sh.record[buf ^ 1] != ~0ull && !(sh.record[buf ^ 1] & kLastRecord)) {
    const unsigned long long r = sh.record[buf ^ 1];
    for (int p = t; p < np; p += kTeamThreads) a.rec_plane_flux[r * np + p] = sh.flux[buf ^ 1][p];
  }
  if (t == 0) atomicMax(&a.counters->longest, made);
  __syncthreads();  // the next cluster reuses shared memory
}

// kLogFit: --fit-spectral-log-pol, a kernel of its own, so that the fit's call costs the other
// runs' update loop no registers.
template <bool kLogFit>
__global__ void __launch_bounds__(kTeamThreads, 1) joined_teams_kernel(const JoinedTeamArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ JoinedShared sh;
  const unsigned int n_big = a.counters->n_big, total = n_big + a.counters->n_small;
  const std::uint32_t top = a.counters->peak_key >> kOrderShift;
  while (true) {
    if (threadIdx.x == 0) sh.item = atomicAdd(&a.counters->next_big, 1u);
    __syncthreads();
    const unsigned int item = sh.item;
    __syncthreads();
    if (item >= total) break;
    const ClusterRange r = item < n_big ? a.big[item] : a.small[item - n_big];
    if (r.y - r.x <= kSharedMembers) joined_team<true, kLogFit>(a, r, smem, sh, top);
    else joined_team<false, kLogFit>(a, r, smem, sh, top);
  }
}

__global__ void emit_plane_fluxes_kernel(const std::uint32_t* order, std::uint32_t made, const float* rec, int planes,
                                         float divisor, float* comp, std::size_t stride) {
  const std::size_t total = static_cast<std::size_t>(made) * planes;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = i / planes, p = i - r * planes;
    const std::size_t src = order ? order[r] : r;
    comp[p * stride + r] = __fdiv_rn(rec[src * planes + p], divisor);  // exact for the delta scale's 1
  }
}

__global__ void gather_plane_kernel(const float* image, const std::uint32_t* pixels, std::uint32_t count, int planes,
                                    int plane, float* out) {
  for (std::size_t m = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; m < count;
       m += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[m * planes + plane] = image[pixels[m]];
}

// plane_set.hpp's integrate(), one plane at a time: the running sum stays in `acc` between planes
// (and between calls), so that blocks of planes add up in the CPU's order.
__global__ void accumulate_planes_kernel(const float* residuals, int count, std::size_t pixels, bool pol,
                                         const float* w, bool first, float* acc) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < pixels;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float s = first ? 0.0f : acc[i];
    for (int p = 0; p < count; ++p) {
      const float x = residuals[p * pixels + i];
      s = pol ? __fadd_rn(s, __fmul_rn(__ldg(w + p), __fmul_rn(x, x))) : __fadd_rn(s, __fmul_rn(__ldg(w + p), x));
    }
    acc[i] = s;
  }
}

__global__ void finish_integration_kernel(const float* acc, std::size_t pixels, bool pol, const std::uint8_t* mask,
                                          float* integrated, float* masked) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < pixels;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = pol ? __fsqrt_rn(acc[i]) : acc[i];
    integrated[i] = v;
    masked[i] = mask[i] ? v : CUDART_NAN_F;
  }
}

int grid_for(std::size_t n) {
  const std::size_t need = (n + kBlock - 1) / kBlock;
  return static_cast<int>(need < 4096 ? (need ? need : 1) : 4096);
}

}  // namespace

void launch_joined_teams(cudaStream_t s, const JoinedTeamArgs& a) {
  if (a.planes > kMaxPlanes) throw std::invalid_argument("joined minor cycle: more than 1024 planes");
  static cuda::PerDeviceOnce configured;
  cuda::once_per_device(configured, [] {
    for (const void* kernel : {reinterpret_cast<const void*>(joined_teams_kernel<false>),
                               reinterpret_cast<const void*>(joined_teams_kernel<true>)}) {
      GPUCLEAN_CUDA_TRY(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSharedBytes)));
      GPUCLEAN_CUDA_TRY(
          cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    }
  });
  const int grid = std::max(cuda::sm_count(), 1);
  if (a.log_terms > 0) joined_teams_kernel<true><<<grid, kTeamThreads, kSharedBytes, s>>>(a);
  else joined_teams_kernel<false><<<grid, kTeamThreads, kSharedBytes, s>>>(a);
  GPUCLEAN_CHECK_LAUNCH();
}

void emit_plane_fluxes(cudaStream_t s, const std::uint32_t* order, std::uint32_t made, const float* rec_plane_flux,
                       int planes, float divisor, float* comp, std::size_t comp_stride) {
  if (made == 0) return;
  emit_plane_fluxes_kernel<<<grid_for(static_cast<std::size_t>(made) * planes), kBlock, 0, s>>>(
      order, made, rec_plane_flux, planes, divisor, comp, comp_stride);
  GPUCLEAN_CHECK_LAUNCH();
}

void gather_plane(cudaStream_t s, const float* image, const std::uint32_t* pixels, std::uint32_t count, int planes,
                  int plane, float* out) {
  if (count == 0) return;
  gather_plane_kernel<<<grid_for(count), kBlock, 0, s>>>(image, pixels, count, planes, plane, out);
  GPUCLEAN_CHECK_LAUNCH();
}

void accumulate_planes(cudaStream_t s, const float* residuals, int count, std::size_t pixels, bool polarizations,
                       const float* iweights, bool first, float* acc) {
  accumulate_planes_kernel<<<grid_for(pixels), kBlock, 0, s>>>(residuals, count, pixels, polarizations, iweights,
                                                               first, acc);
  GPUCLEAN_CHECK_LAUNCH();
}

void finish_integration(cudaStream_t s, const float* acc, std::size_t pixels, bool polarizations,
                        const std::uint8_t* mask, float* integrated, float* masked) {
  finish_integration_kernel<<<grid_for(pixels), kBlock, 0, s>>>(acc, pixels, polarizations, mask, integrated, masked);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::clean::gpu

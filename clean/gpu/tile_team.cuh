#pragma once
// The tile team (CUDA only; team_kernel.cu): a large cluster's Högbom chain run by one warp, with
// no block barrier in the step. The cluster's box is cut into T x T tiles (T a power of two, at
// least 16 and at least a seventh of the patch, so that a patch window touches at most 8 x 8
// tiles); its members are stored tile by tile in shared memory, each with its value and its
// position in the tile. Every tile keeps the packed maximum of its members and every group of
// kGroupTiles consecutive tiles the maximum of theirs. A step takes the best group maximum (each
// lane reads at most 16 of them, then a warp max), subtracts the patch from the members of the
// tiles the window touches (one lane a tile) and rebuilds those tiles' maxima and their groups';
// the rest keep theirs. The packed index is y << 16 | x, monotone in pixel order, so the choice
// is MinorCycleCpu's: the largest key, then the lowest pixel. The arithmetic is the other teams'
// (subtract_rn), so the chain is MinorCycleCpu's bit for bit.
//
// A step costs about the members of the touched tiles divided among the lanes, so it is fast
// while the tiles near the component hold few members each (a dense 16 x 16 tile is 256 members
// for one lane). A cluster goes to the row team (team_kernel.cu) instead when its members do not
// fit (tile_team_capacity) or its box needs tiles above 256 pixels or more than the tile table
// that is left beside the members holds.

#include <cstdint>

#include "clean/gpu/subtract_rn.cuh"
#include "clean/gpu/team_common.cuh"

namespace gpuclean::clean::gpu {

inline constexpr std::uint32_t kGroupTiles = 16;  // tiles a group maximum covers
inline constexpr std::uint32_t kMaxGroups = 512;  // so that a lane reads at most 16 group maxima a step
inline constexpr std::uint32_t kTileQuantum = 32 * kGroupTiles;  // the tile table grows by 512 tiles
inline constexpr std::uint32_t kMaxTiles = kMaxGroups * kGroupTiles;
inline constexpr int kMinTileShift = 4, kMaxTileShift = 8;  // T = 16 .. 256: a position fits 16 bits
// Shared bytes of kTileQuantum tiles: their maxima (8), their groups' maxima (8 / 16), their starts (2).
inline constexpr std::uint32_t kQuantumBytes = kTileQuantum * 8 + kTileQuantum / kGroupTiles * 8 + kTileQuantum * 2;
inline constexpr std::uint32_t kTileTableExtra = 4;  // two more tile starts (the end, and alignment)

/// The most members the tile team holds in `shared_bytes` (6 bytes each, beside the smallest table).
__host__ __device__ constexpr std::uint32_t tile_team_capacity(std::uint32_t shared_bytes) {
  return (shared_bytes - kTileTableExtra - kQuantumBytes) / 6;
}

namespace tile_detail {

// The tiles a table can have beside m members: a multiple of kTileQuantum, 0 when none fits.
__device__ __forceinline__ std::uint32_t table_tiles(std::uint32_t shared_bytes, std::uint32_t m) {
  const std::uint32_t left = shared_bytes - kTileTableExtra - 6 * m;
  return min(kMaxTiles, left / kQuantumBytes * kTileQuantum);
}

// Dynamic shared memory, for a table of nt tiles: tile maxima (during the set-up, the tiles'
// member counts and then scatter cursors), group maxima, tile starts, then the members' values and
// positions. Every part stays aligned: nt is a multiple of kTileQuantum.
struct Layout {
  unsigned long long* tile_max;   // [nt], 0 past the last tile
  unsigned long long* group_max;  // [nt / kGroupTiles]
  std::uint16_t* tile_start;      // [nt + 2]
  float* vals;                    // [m], tile by tile
  std::uint16_t* loc;             // [m]: ly << s | lx within the member's tile
  __device__ std::uint32_t* counts() const { return reinterpret_cast<std::uint32_t*>(tile_max); }
};

__device__ __forceinline__ Layout layout(unsigned char* smem, std::uint32_t nt, std::uint32_t m) {
  Layout l;
  l.tile_max = reinterpret_cast<unsigned long long*>(smem);
  l.group_max = l.tile_max + nt;
  l.tile_start = reinterpret_cast<std::uint16_t*>(l.group_max + nt / kGroupTiles);
  l.vals = reinterpret_cast<float*>(l.tile_start + nt + 2);
  l.loc = reinterpret_cast<std::uint16_t*>(l.vals + m);
  return l;
}

// log2 T for a box of (w + 1) x (h + 1) pixels and a table of nt tiles; above kMaxTileShift when
// no tiling fits.
__device__ __forceinline__ int tile_shift(std::uint32_t w, std::uint32_t h, int half_width, std::uint32_t nt) {
  int s = kMinTileShift;
  while (s <= kMaxTileShift && (7 << s) < 2 * half_width + 1) ++s;
  while (s <= kMaxTileShift && ((w >> s) + 1) * ((h >> s) + 1) > nt) ++s;
  return s;
}

struct Box {
  std::uint32_t x0, y0, ntx;
  int s;
  // The packed index (y << 16 | x) of tile (tx, ty)'s first pixel.
  __device__ __forceinline__ std::uint32_t origin(std::uint32_t tx, std::uint32_t ty) const {
    return ((y0 + (ty << s)) << 16) | (x0 + (tx << s));
  }
  __device__ __forceinline__ std::uint32_t index(std::uint32_t origin, std::uint32_t loc) const {
    return origin + ((loc >> s) << 16) + (loc & ((1u << s) - 1u));
  }
};

// The packed maximum of a tile's members.
__device__ __forceinline__ unsigned long long tile_scan(const Layout& l, const Box& b, std::uint32_t tile,
                                                        bool abs_key) {
  const std::uint32_t ty = tile / b.ntx, o = b.origin(tile - ty * b.ntx, ty);
  unsigned long long best = 0;
  for (std::uint32_t j = l.tile_start[tile]; j < l.tile_start[tile + 1]; ++j)
    best = max(best, pack_slot(l.vals[j], b.index(o, l.loc[j]), abs_key));
  return best;
}

__device__ __forceinline__ unsigned long long group_scan(const Layout& l, std::uint32_t group) {
  const unsigned long long* t = l.tile_max + group * kGroupTiles;
  unsigned long long r[4] = {0, 0, 0, 0};
#pragma unroll
  for (std::uint32_t k = 0; k < kGroupTiles; ++k) r[k & 3] = max(r[k & 3], t[k]);
  return max(max(r[0], r[1]), max(r[2], r[3]));
}

// The largest of the group maxima that lane holds (groups lane, lane + 32, ...): four running
// maxima, so that the loads overlap.
__device__ __forceinline__ unsigned long long lane_max(const unsigned long long* group_max, std::uint32_t lane,
                                                       std::uint32_t rounds) {
  unsigned long long r0 = 0, r1 = 0, r2 = 0, r3 = 0;
#pragma unroll
  for (std::uint32_t k = 0; k < kMaxGroups / 32; k += 4) {
    if (k < rounds) r0 = max(r0, group_max[lane + 32 * k]);
    if (k + 1 < rounds) r1 = max(r1, group_max[lane + 32 * (k + 1)]);
    if (k + 2 < rounds) r2 = max(r2, group_max[lane + 32 * (k + 2)]);
    if (k + 3 < rounds) r3 = max(r3, group_max[lane + 32 * (k + 3)]);
  }
  return max(max(r0, r1), max(r2, r3));
}

// The tiles a patch window touches: rows ty0..ty1, columns tx0..tx1 of the tile grid.
struct Window {
  int tx0, tx1, ty0, ty1;
  __device__ __forceinline__ int across() const { return tx1 - tx0 + 1; }
  // The first touched tile at or after tile r (one exists when a touched tile lies in r's group).
  __device__ __forceinline__ int first_from(int r, int ntx) const {
    const int ry = r / ntx, rx = r - ry * ntx;
    if (ry < ty0) return ty0 * ntx + tx0;
    if (rx <= tx0) return ry * ntx + tx0;
    if (rx <= tx1) return r;
    return (ry + 1) * ntx + tx0;
  }
};

// The chain, on one warp: components until the limit, the budget, the pool or the cutoff.
__device__ inline void chain(const TeamArgs& a, const Layout& l, const Box& b, std::uint32_t ntiles,
                             std::uint32_t x_last, std::uint32_t y_last, std::uint32_t lane, std::uint32_t top) {
  using cuda::warp_max64;
  const bool abs_key = a.abs_key;
  const int hw = a.half_width, side = 2 * hw + 1, s = b.s, ntx = static_cast<int>(b.ntx);
  const std::uint32_t mask = (1u << s) - 1u, groups = (ntiles + kGroupTiles - 1) / kGroupTiles;
  const std::uint32_t rounds = (groups + 31) / 32;
  unsigned long long local = lane_max(l.group_max, lane, rounds);
  std::uint32_t made = 0;
  unsigned long long order = ~0ull;
  WarpRecords rec;  // lane i buffers record i of the current group of 32
  bool room = true;
  while (true) {
    const unsigned long long best = warp_max64(local);
    UnpackedPeak p;
    if (!next_peak(a, best, !room, made, abs_key, p)) break;
    const int bx = static_cast<int>(p.pixel & 0xFFFFu), by = static_cast<int>(p.pixel >> 16);
    const float flux = take_component(a, top, bx, by, p, true, lane, rec, made, order, room);

    // The tiles the window [bx - hw, bx + hw] x [by - hw, by + hw] touches, one lane each.
    const int cx = bx - static_cast<int>(b.x0), cy = by - static_cast<int>(b.y0);
    const Window w{max(cx - hw, 0) >> s, min(cx + hw, static_cast<int>(x_last)) >> s, max(cy - hw, 0) >> s,
                   min(cy + hw, static_cast<int>(y_last)) >> s};
    const int across = w.across(), touched = across * (w.ty1 - w.ty0 + 1);
    for (int i = static_cast<int>(lane); i < touched; i += 32) {
      const int ty = w.ty0 + i / across, tx = w.tx0 + i % across, tile = ty * ntx + tx;
      const std::uint32_t first = l.tile_start[tile], end = l.tile_start[tile + 1];
      if (first == end) continue;
      const std::uint32_t o = b.origin(static_cast<std::uint32_t>(tx), static_cast<std::uint32_t>(ty));
      // Patch column and row of the tile's first pixel.
      const int px0 = static_cast<int>(b.x0) + (tx << s) - bx + hw, py0 = static_cast<int>(b.y0) + (ty << s) - by + hw;
      unsigned long long tmax = 0;
      for (std::uint32_t j = first; j < end; ++j) {
        const std::uint32_t q = l.loc[j];
        const int px = px0 + static_cast<int>(q & mask), py = py0 + static_cast<int>(q >> s);
        float v = l.vals[j];
        const std::uint32_t idx = b.index(o, q);
        if (static_cast<unsigned>(px) <= static_cast<unsigned>(2 * hw) &&
            static_cast<unsigned>(py) <= static_cast<unsigned>(2 * hw)) {
          v = subtract_rn(v, member_flux(a, flux, idx), __ldg(a.patch + py * side + px));
          l.vals[j] = v;
        }
        tmax = max(tmax, pack_slot(v, idx, abs_key));
      }
      l.tile_max[tile] = tmax;
    }
    __syncwarp();
    // Each touched group once: by the lane of its first touched tile.
    for (int i = static_cast<int>(lane); i < touched; i += 32) {
      const int tile = (w.ty0 + i / across) * ntx + w.tx0 + i % across;
      const int group = tile / static_cast<int>(kGroupTiles);
      if (w.first_from(group * static_cast<int>(kGroupTiles), ntx) == tile)
        l.group_max[group] = group_scan(l, static_cast<std::uint32_t>(group));
    }
    __syncwarp();
    local = lane_max(l.group_max, lane, rounds);
    __syncwarp();  // every lane has read the maxima before the next step writes them
  }
  if (room && (made & 31) != 0) rec.flush(a, top, made & 31, order, lane);
  if (lane == 0) atomicMax(&a.counters->longest, made);
}

}  // namespace tile_detail

/// Cleans the cluster with the tile team and returns true, or returns false at once (the
/// decision is the same in every thread) when the cluster is not for it. Block-collective, on
/// kBlock threads.
template <int kBlock>
__device__ bool tile_team(const TeamArgs& a, ClusterRange range, unsigned char* smem, BlockShared& sh,
                          std::uint32_t top) {
  using cuda::kFullMask;
  using namespace tile_detail;
  static_assert(kMaxTiles % kBlock == 0 && kTileQuantum % kBlock == 0, "the scan takes whole runs of tiles");
  const std::uint32_t t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::uint32_t m = range.y - range.x;
  if (m > tile_team_capacity(a.shared_bytes)) return false;
  const std::uint32_t nt = table_tiles(a.shared_bytes, m);
  const std::uint32_t* xy = a.xy + range.x;
  const std::uint32_t y0 = xy[0] >> 16, y1 = xy[m - 1] >> 16;
  if (y1 >= 0x8000u) return false;  // y << 16 | x must fit the packed peak's 31 bits

  // The box's columns (rows come from the pixel order).
  if (t == 0) {
    sh.x0 = 0xFFFFu;
    sh.x1 = 0u;
  }
  __syncthreads();
  std::uint32_t lo = 0xFFFFu, hi = 0u;
  for (std::uint32_t j = t; j < m; j += kBlock) {
    const std::uint32_t x = xy[j] & 0xFFFFu;
    lo = min(lo, x);
    hi = max(hi, x);
  }
  lo = __reduce_min_sync(kFullMask, lo);
  hi = __reduce_max_sync(kFullMask, hi);
  if (lane == 0) {
    atomicMin(&sh.x0, lo);
    atomicMax(&sh.x1, hi);
  }
  __syncthreads();
  const std::uint32_t x0 = sh.x0, x1 = sh.x1;
  const int s = tile_shift(x1 - x0, y1 - y0, a.half_width, nt);
  if (s > kMaxTileShift) return false;
  const Box b{x0, y0, ((x1 - x0) >> s) + 1, s};
  const std::uint32_t ntiles = b.ntx * (((y1 - y0) >> s) + 1);
  const Layout l = layout(smem, nt, m);
  std::uint32_t* counts = l.counts();
  const std::uint32_t mask = (1u << s) - 1u;
  auto tile_of = [&](std::uint32_t q) { return (((q >> 16) - y0) >> s) * b.ntx + (((q & 0xFFFFu) - x0) >> s); };

  // Count the members of each tile, scan the counts into tile starts, scatter the members.
  for (std::uint32_t i = t; i < nt; i += kBlock) counts[i] = 0;
  __syncthreads();
  for (std::uint32_t j = t; j < m; j += kBlock) atomicAdd(&counts[tile_of(xy[j])], 1u);
  __syncthreads();
  const std::uint32_t run = nt / kBlock, first_tile = t * run;  // thread t scans tiles [first, first + run)
  std::uint32_t mine = 0, densest = 0;
  for (std::uint32_t i = 0; i < run; ++i) {
    mine += counts[first_tile + i];
    densest = max(densest, counts[first_tile + i]);
  }
  std::uint32_t incl = mine;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const std::uint32_t v = __shfl_up_sync(kFullMask, incl, d);
    if (static_cast<int>(lane) >= d) incl += v;
  }
  densest = __reduce_max_sync(kFullMask, densest);
  if (lane == 31) sh.scan[warp] = incl;
  if (lane == 0 && densest) atomicMax(&a.counters->densest_tile, densest);
  __syncthreads();
  if (warp == 0) {
    const std::uint32_t w = lane < kBlock / 32 ? sh.scan[lane] : 0u;
    std::uint32_t wi = w;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const std::uint32_t v = __shfl_up_sync(kFullMask, wi, d);
      if (static_cast<int>(lane) >= d) wi += v;
    }
    sh.scan[lane] = wi - w;
  }
  __syncthreads();
  std::uint32_t start = sh.scan[warp] + incl - mine;
  for (std::uint32_t i = 0; i < run; ++i) {
    const std::uint32_t c = counts[first_tile + i];
    l.tile_start[first_tile + i] = static_cast<std::uint16_t>(start);
    counts[first_tile + i] = start;  // now the tile's scatter cursor
    start += c;
  }
  if (t == 0) l.tile_start[nt] = static_cast<std::uint16_t>(m);
  __syncthreads();
  for (std::uint32_t j = t; j < m; j += kBlock) {
    const std::uint32_t q = xy[j], lx = (q & 0xFFFFu) - x0, ly = (q >> 16) - y0;
    const std::uint32_t at = atomicAdd(&counts[(ly >> s) * b.ntx + (lx >> s)], 1u);
    l.vals[at] = a.values[range.x + j];
    l.loc[at] = static_cast<std::uint16_t>(((ly & mask) << s) | (lx & mask));
  }
  __syncthreads();  // the cursors are done: their memory becomes the tile maxima
  for (std::uint32_t i = t; i < nt; i += kBlock) l.tile_max[i] = i < ntiles ? tile_scan(l, b, i, a.abs_key) : 0ull;
  __syncthreads();
  for (std::uint32_t g = t; g < nt / kGroupTiles; g += kBlock) l.group_max[g] = group_scan(l, g);
  if (t == 0) {
    atomicAdd(&a.counters->n_tiled, 1u);
    atomicMax(&a.counters->tile_shift, static_cast<unsigned int>(s));
  }
  __syncthreads();

  if (warp == 0) chain(a, l, b, ntiles, x1 - x0, y1 - y0, lane, top);
  __syncthreads();  // the next cluster reuses shared memory
  return true;
}

}  // namespace gpuclean::clean::gpu

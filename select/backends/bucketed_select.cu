// Two bucketed selections that share one flow (sample, count pass, target buckets, filter pass,
// sort and choose on the reduced vector) and differ in how an element finds its bucket:
//
// `sample`: SampleSelect (Ribizel & Anzt, Parallel Computing 2019), one level of recursion:
//
//  1. Sample 16 keys per bucket at random positions and sort them; every 16th is a splitter.
//     A key repeated among the splitters gets an equality bucket [v, v+1) of its own, so that
//     runs of equal elements terminate (paper, section 4.3).
//  2. Count pass: a search over the splitters, kept in shared memory, gives each element its
//     bucket; a shared histogram counts the buckets (warp-aggregated when a warp agrees). The
//     splitters are an Eytzinger-ordered tree (eytzinger_tree.hpp) and each lane walks the four
//     keys of its float4 together: a fixed number of branch-free steps with four independent
//     shared-memory loads in flight, where a binary search per key waits on one load at a time.
//     For order statistics the count pass also memoizes each element's bucket (an "oracle",
//     16 bits since there are up to 8191 buckets), which n-sized scratch order statistics may
//     use; top-k keeps O(k + sqrt n) scratch and searches again instead.
//  3. The bucket(s) holding the target rank(s) follow from the counts' prefix sums.
//  4. Filter pass: elements of the target bucket(s) are appended to a small buffer (and, for
//     top-k, the elements of all better buckets, which are all selected).
//  5. The reduced buffer (about n / buckets elements per target) is sorted: by the paper's
//     recursion base, a one-block bitonic sort in shared memory, up to 4096 elements (n up to
//     about 2^20); by a radix sort beyond. Top-k and a single order statistic keep one target
//     bucket (at most 65536 keys at n = 2^28), for which a second level of recursion would add a
//     sample, a count and a filter (two more host round trips) to save little.
//  6. Many order statistics (the 101 percentiles keep 101 target buckets, 6.6 M keys at 2^28)
//     take the second level on the reduced buffer R: since the target buckets are disjoint key
//     ranges, sorted R is their sorted keys one after the other, so rank r of target bucket t is
//     position saved_before(t) + r - below(t) of sorted R, and finding a few positions of R is
//     SampleSelect again: a sample of R, splitters with equality buckets, a count of R's keys in
//     shared memory, a filter of the sub-buckets that hold the positions, and a sort of those
//     alone (about 3 K keys each at 2^28, instead of 65 K). SampleTuning::second_level_min
//     says from which size of R.
// An equality bucket needs no filtering: its key is the answer (order statistics), or its
// lowest-index elements are taken in index order (top-k).
//
// "sample-approx" is the paper's approximate selection: it stops after the count pass and
// answers with the target bucket's lower splitter. Its rank error is at most one bucket.
//
// `bucket`: bucketMultiSelect (Blanchard, Opavsky & Uysaler): 64 kernel-density intervals from
// the sorted sample, each split into equal-width buckets; an element finds its interval by a
// 6-step search and its bucket by a linear projection (one multiply). Count pass, active
// buckets, then the reduction (a filter pass that recomputes the projection, since the paper
// keeps no oracles) and sort-and-choose on the reduced vector. Buckets of one repeated key are
// not recognised here; a target bucket too large to buffer takes the exact radix path.

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "select/backends/backends.hpp"
#include "select/backends/bucketed_select.hpp"
#include "select/backends/eytzinger_tree.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/detail/bitonic_sort.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/host_flow.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::select {
namespace {

using namespace detail;

constexpr std::size_t kOversampling = 16;
constexpr std::size_t kDirectBelow = 1u << 14;

std::size_t bucket_count(std::size_t n) {
  // About sqrt(n) / 4 buckets keeps each near 4 sqrt(n) elements: O(sqrt n) filter buffers.
  std::size_t b = 256;
  while (b < 4096 && b * b * 16 < n) b *= 2;
  return b;
}

std::size_t sample_count(std::size_t n) { return std::min(n, bucket_count(n) * kOversampling); }

// The second level's buckets: about 1 K keys each, at most 2048 so that its splitters (with
// equality buckets, up to 4095 bounds), histogram and regions fit in 48 KB of shared memory.
constexpr std::size_t kSecondMaxBuckets = 2048;
constexpr std::size_t kSecondMaxSamples = kSecondMaxBuckets * kOversampling;

std::size_t second_level_buckets(std::size_t total) {
  std::size_t b = 256;
  while (b < kSecondMaxBuckets && b * 1024 < total) b *= 2;
  return b;
}

// ---- Kernels of the second level: they read the reduced buffer's composites, not the input.

constexpr int kThreads = 256;
__global__ void sample_reduced_kernel(const std::uint64_t* r, std::size_t total, std::uint64_t seed,
                                      std::uint32_t* out, std::size_t count) {
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < count;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[j] = composite_key(r[mix64(seed + 0x9E3779B97F4A7C15ull * (j + 1)) % total]);
}

// The number of bounds <= key (bounds strictly increasing, in shared memory).
__device__ __forceinline__ int bound_segment(const std::uint32_t* s_bounds, int n_bounds, std::uint32_t key) {
  int lo = 0, hi = n_bounds;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (s_bounds[mid] <= key) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Counts R's keys per segment. The loop steps whole warps (padding lanes inactive), so the
// warp votes see all 32 lanes; a warp whose keys share a segment adds once.
__global__ void __launch_bounds__(kThreads) reduced_count_kernel(const std::uint64_t* r, std::size_t total,
                                                                 const std::uint32_t* bounds, int n_bounds,
                                                                 unsigned long long* counts) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* s_bounds = reinterpret_cast<std::uint32_t*>(smem);
  auto* s_hist = reinterpret_cast<unsigned*>(s_bounds + n_bounds);
  for (int i = threadIdx.x; i < n_bounds; i += blockDim.x) s_bounds[i] = bounds[i];
  for (int i = threadIdx.x; i <= n_bounds; i += blockDim.x) s_hist[i] = 0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x & 31);
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  for (std::size_t base = warp * 32; base < total; base += n_warps * 32) {
    const std::size_t i = base + static_cast<std::size_t>(lane);
    const bool ok = i < total;
    const int seg = ok ? bound_segment(s_bounds, n_bounds, composite_key(r[i])) : 0;
    detail::warp_histogram_add(s_hist, seg, ok);
  }
  __syncthreads();
  for (int i = threadIdx.x; i <= n_bounds; i += blockDim.x)
    if (s_hist[i]) atomicAdd(&counts[i], static_cast<unsigned long long>(s_hist[i]));
}

// Appends the composites of R whose segment maps to region B to `out` (one atomic per warp).
__global__ void __launch_bounds__(kThreads) reduced_filter_kernel(const std::uint64_t* r, std::size_t total,
                                                                  const std::uint32_t* bounds, int n_bounds,
                                                                  const std::uint8_t* regions, std::uint64_t* out,
                                                                  unsigned long long cap, unsigned long long* fill) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* s_bounds = reinterpret_cast<std::uint32_t*>(smem);
  auto* s_regions = reinterpret_cast<std::uint8_t*>(s_bounds + n_bounds);
  for (int i = threadIdx.x; i < n_bounds; i += blockDim.x) s_bounds[i] = bounds[i];
  for (int i = threadIdx.x; i <= n_bounds; i += blockDim.x) s_regions[i] = regions[i];
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x & 31);
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  bool room = true;
  for (std::size_t base = warp * 32; base < total; base += n_warps * 32) {
    const std::size_t i = base + static_cast<std::size_t>(lane);
    const std::uint64_t c = i < total ? r[i] : 0;
    const bool want = i < total && s_regions[bound_segment(s_bounds, n_bounds, composite_key(c))] == kRegionB;
    detail::warp_append(want, c, out, cap, fill, room);
  }
}

// ---- The count pass over the Eytzinger tree (step 2). Counts every element (NaN in its own
// segment) and, when `oracles` is set, writes each element's segment. The float4 loop steps whole
// warps, so the votes see all 32 lanes; a lane whose four keys share a segment adds once, and a
// warp whose 128 keys share one (sorted or equal data) adds once.
template <KeyMode kMode>
__global__ void __launch_bounds__(kThreads) tree_count_kernel(const float* in, std::size_t n, const std::uint32_t* nodes,
                                                              int levels, int real_bounds, bool invalid_bound, int n_seg,
                                                              unsigned long long* counts, std::uint16_t* oracles) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* s_nodes = reinterpret_cast<std::uint32_t*>(smem);
  const int n_nodes = 1 << levels;
  auto* s_hist = reinterpret_cast<unsigned*>(s_nodes + n_nodes);
  for (int i = threadIdx.x; i < n_nodes; i += blockDim.x) s_nodes[i] = nodes[i];
  for (int i = threadIdx.x; i < n_seg; i += blockDim.x) s_hist[i] = 0;
  __syncthreads();

  const int lane = static_cast<int>(threadIdx.x & 31);
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(in) & 15u) == 0;
  const std::size_t n_vec = aligned ? n / 4 : 0;
  const uint4* in4 = reinterpret_cast<const uint4*>(in);
  for (std::size_t base = warp * 32; base < n_vec; base += n_warps * 32) {
    const std::size_t v = base + static_cast<std::size_t>(lane);
    const bool ok = v < n_vec;
    const uint4 q = ok ? __ldcs(in4 + v) : make_uint4(0u, 0u, 0u, 0u);
    const std::uint32_t k0 = rank_key_bits<kMode>(q.x), k1 = rank_key_bits<kMode>(q.y);
    const std::uint32_t k2 = rank_key_bits<kMode>(q.z), k3 = rank_key_bits<kMode>(q.w);
    unsigned i0 = 1, i1 = 1, i2 = 1, i3 = 1;
    for (int l = 0; l < levels; ++l) {
      const std::uint32_t a0 = s_nodes[i0], a1 = s_nodes[i1], a2 = s_nodes[i2], a3 = s_nodes[i3];
      i0 = 2 * i0 + (a0 <= k0 ? 1u : 0u);
      i1 = 2 * i1 + (a1 <= k1 ? 1u : 0u);
      i2 = 2 * i2 + (a2 <= k2 ? 1u : 0u);
      i3 = 2 * i3 + (a3 <= k3 ? 1u : 0u);
    }
    const int s0 = eytzinger_segment(i0, k0, levels, real_bounds, invalid_bound);
    const int s1 = eytzinger_segment(i1, k1, levels, real_bounds, invalid_bound);
    const int s2 = eytzinger_segment(i2, k2, levels, real_bounds, invalid_bound);
    const int s3 = eytzinger_segment(i3, k3, levels, real_bounds, invalid_bound);
    const bool single = s0 == s1 && s1 == s2 && s2 == s3;
    const int first = __shfl_sync(kFullMask, s0, 0);
    if (__all_sync(kFullMask, ok && single && s0 == first)) {
      if (lane == 0) atomicAdd(&s_hist[s0], 128u);
    } else if (ok) {
      if (single) {
        atomicAdd(&s_hist[s0], 4u);
      } else {
        atomicAdd(&s_hist[s0], 1u);
        atomicAdd(&s_hist[s1], 1u);
        atomicAdd(&s_hist[s2], 1u);
        atomicAdd(&s_hist[s3], 1u);
      }
    }
    if (oracles && ok)
      reinterpret_cast<ushort4*>(oracles)[v] =
          make_ushort4(static_cast<unsigned short>(s0), static_cast<unsigned short>(s1),
                       static_cast<unsigned short>(s2), static_cast<unsigned short>(s3));
  }
  // The rest (under four elements, or all of an unaligned input): no warp votes here.
  for (std::size_t i = n_vec * 4 + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t key = rank_key_bits<kMode>(__float_as_uint(__ldcs(in + i)));
    const int seg = segment_of(s_nodes, levels, real_bounds, invalid_bound, key);
    atomicAdd(&s_hist[seg], 1u);
    if (oracles) oracles[i] = static_cast<std::uint16_t>(seg);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n_seg; i += blockDim.x)
    if (s_hist[i]) atomicAdd(&counts[i], static_cast<unsigned long long>(s_hist[i]));
}

constexpr std::size_t kTreeCountMaxSmem = 72 * 1024;  // tree nodes and histogram: at most 64 KiB

template <KeyMode kMode>
void launch_tree_count(cudaStream_t stream, const float* in, std::size_t n, const EytzingerTree& t,
                       const std::uint32_t* nodes, int n_seg, unsigned long long* counts, std::uint16_t* oracles) {
  const std::size_t smem = t.nodes.size() * 4 + static_cast<std::size_t>(n_seg) * 4;  // at most 64 KiB
  // Past the default 48 KiB only with equality buckets. Raised once per device to the most any
  // call needs: a per-call setting would race with another thread's launch in batch mode.
  static cuda::PerDeviceOnce configured;
  cuda::once_per_device(configured, [] {
    GPUCLEAN_CUDA_TRY(cudaFuncSetAttribute(tree_count_kernel<kMode>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kTreeCountMaxSmem)));
  });
  if (smem > kTreeCountMaxSmem) throw std::logic_error("tree count: shared memory beyond its limit");
  // One wave of as many blocks as fit (a second, partial wave would double the time of a
  // grid-stride pass), and no more than one block per 16 K elements: each block loads the tree
  // and flushes its histogram, which small inputs should not pay for a thousand times.
  int per_sm = 0;
  const int sms = cuda::sm_count();
  GPUCLEAN_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tree_count_kernel<kMode>, kThreads, smem));
  const std::size_t wave = static_cast<std::size_t>(sms) * static_cast<std::size_t>(std::max(per_sm, 1));
  const auto grid = static_cast<unsigned>(std::clamp<std::size_t>((n + 16383) / 16384, 1, wave));
  tree_count_kernel<kMode><<<grid, kThreads, smem, stream>>>(in, n, nodes, t.levels, t.real_bounds, t.invalid_bound,
                                                             n_seg, counts, oracles);
  GPUCLEAN_CHECK_LAUNCH();
}

int reduced_grid(std::size_t count) {
  return static_cast<int>(std::max<std::size_t>(
      1, std::min<std::size_t>((count + kThreads - 1) / kThreads, static_cast<std::size_t>(streaming_blocks()))));
}

// Bounds from the sorted sample: splitters, equality buckets for repeated splitters, and a last
// bound that puts NaN keys in a segment of their own. Strictly increasing.
struct Buckets {
  std::vector<std::uint32_t> bounds;  // splitters (sample); empty for a projection
  std::vector<bool> equality;         // per segment
  int nan_segment = -1;
  bool projected = false;             // bucket: segments are the projection's buckets
  Projection projection;
  int segments() const { return projected ? projection.buckets() : static_cast<int>(bounds.size()) + 1; }
};

// bucketMultiSelect's kernel-density intervals: 64 pivots from the sorted sample, each interval
// split into `buckets / 64` buckets with slope per_interval / width.
Buckets make_projection(const std::vector<std::uint32_t>& sample, std::size_t buckets) {
  Buckets b;
  b.projected = true;
  Projection& p = b.projection;
  p.intervals = kMaxIntervals;
  p.per_interval = static_cast<int>(std::max<std::size_t>(buckets / kMaxIntervals, 4));
  // Valid keys only: NaN keys have a bucket of their own.
  const std::size_t valid = static_cast<std::size_t>(
      std::lower_bound(sample.begin(), sample.end(), kInvalidKey) - sample.begin());
  for (int i = 0; i < p.intervals; ++i) {
    p.lo[i] = i == 0 || valid == 0 ? 0u : sample[static_cast<std::size_t>(i) * valid / p.intervals];
  }
  for (int i = 0; i < p.intervals; ++i) {
    const std::uint64_t hi = i + 1 < p.intervals ? p.lo[i + 1]
                                                 : (valid ? static_cast<std::uint64_t>(sample[valid - 1]) + 1 : 1);
    const double width = static_cast<double>(hi) - static_cast<double>(p.lo[i]);
    p.slope[i] = width > 0 ? static_cast<float>(p.per_interval / width) : 0.0f;
  }
  b.equality.assign(static_cast<std::size_t>(p.buckets()), false);
  b.nan_segment = p.buckets() - 1;
  return b;
}

Buckets make_buckets(const std::vector<std::uint32_t>& sample, std::size_t buckets) {
  std::vector<std::uint32_t> split;
  for (std::size_t i = 1; i < buckets; ++i) split.push_back(sample[i * sample.size() / buckets]);
  Buckets b;
  for (std::size_t i = 0; i < split.size();) {
    const std::uint32_t v = split[i];
    std::size_t j = i;
    while (j < split.size() && split[j] == v) ++j;
    if (v == kInvalidKey) break;
    if (b.bounds.empty() || b.bounds.back() < v) b.bounds.push_back(v);
    if (j - i >= 2 && v + 1 < kInvalidKey) b.bounds.push_back(v + 1);  // equality bucket [v, v+1)
    i = j;
  }
  if (b.bounds.empty() || b.bounds.back() != kInvalidKey) b.bounds.push_back(kInvalidKey);
  b.equality.assign(b.bounds.size() + 1, false);
  for (std::size_t s = 1; s < b.bounds.size(); ++s) b.equality[s] = b.bounds[s] == b.bounds[s - 1] + 1;
  b.nan_segment = static_cast<int>(b.bounds.size());
  return b;
}

struct Plan : FilterBuffers {
  std::uint32_t *samples, *sorted;
  std::uint32_t *samples2, *sorted2;  // the second level's sample (order statistics, sample only)
  void* sort_temp2;
  std::size_t sort_temp2_bytes;
  std::uint16_t* oracles;
  Projection* projection;
  void* sort_temp;
  std::size_t sort_temp_bytes, s, buckets;
};

enum class Scheme { kSplitters, kProjection };

class BucketedSelector final : public Selector {
 public:
  BucketedSelector(Scheme scheme, bool approximate, const SampleTuning& tuning = {})
      : scheme_(scheme), approximate_(approximate), tuning_(tuning) {}
  std::string_view name() const override {
    return scheme_ == Scheme::kProjection ? "bucket" : approximate_ ? "sample-approx" : "sample";
  }
  bool exact() const override { return !approximate_; }

  std::size_t top_k_workspace_bytes(std::size_t n, std::size_t k) const override {
    Arena a;
    plan(a, n, std::min(k, n), 0, false);
    return a.used();
  }
  std::size_t order_statistics_workspace_bytes(std::size_t n, std::size_t n_ranks) const override {
    Arena a;
    plan(a, n, 0, n_ranks, !approximate_ && scheme_ == Scheme::kSplitters);
    return a.used();
  }

  SelectStats run_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& req,
                        Workspace& ws, float* out_v, std::uint32_t* out_i) const override {
    if (approximate_) throw std::logic_error("sample-approx offers approximate order statistics only; use sample");
    SelectStats stats;
    const std::size_t k = std::min(req.k, n);
    if (k == 0) return stats;
    const KeyMode mode = key_mode(req.order);
    const Plan p = lay_out(ws, stats, [&](Arena& a) { return plan(a, n, k, 0, false); });

    if (n <= kDirectBelow || k == n) {  // sort everything valid (small n), or take it all (k == n)
      const bool all = k == n;
      const auto c = pass(stream, d_in, n, mode, p, {kInvalidKey}, {all ? kRegionA : kRegionB, kRegionNone}, k, &stats);
      const std::size_t valid = c[0];
      if (all) return finish(stream, d_in, p, valid, nullptr, 0, req.sorted_output, stats, out_v, out_i);
      sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, valid);
      return finish(stream, d_in, p, 0, p.sorted_b, std::min(k, valid), req.sorted_output, stats, out_v, out_i);
    }

    const Buckets b = sample_buckets(stream, d_in, n, mode, p);
    const auto counts = count_pass(stream, d_in, n, mode, p, b, &stats, nullptr);
    unsigned long long below = 0;
    std::size_t t = 0;
    while (t + 1 < counts.size() && below + counts[t] < k) below += counts[t++];

    if (static_cast<int>(t) == b.nan_segment) {  // k exceeds the valid keys: take them all
      const auto c = pass(stream, d_in, n, mode, p, {kInvalidKey}, {kRegionA, kRegionNone}, k, &stats);
      return finish(stream, d_in, p, c[0], nullptr, 0, req.sorted_output, stats, out_v, out_i);
    }
    const std::uint32_t lo = b.projected || t == 0 ? 0u : b.bounds[t - 1];
    const std::uint32_t hi = b.projected ? 0u : b.bounds[t];
    if (counts[t] > p.cap_b) {  // a bucket too large to buffer: equal keys, or a skewed sample
      ++stats.retries;
      const std::optional<Threshold> known = b.equality[t] ? std::optional(Threshold{lo, below}) : std::nullopt;
      exact_top_k(stream, d_in, n, mode, k, known, p, stats);
      return finish(stream, d_in, p, k, nullptr, 0, req.sorted_output, stats, out_v, out_i);
    }
    // Filter: every key below the bucket is selected (A); the bucket itself is buffered (B).
    std::vector<unsigned long long> c;
    if (b.projected) {
      std::vector<std::uint8_t> regions(counts.size(), kRegionNone);
      std::fill(regions.begin(), regions.begin() + static_cast<std::ptrdiff_t>(t), kRegionA);
      regions[t] = kRegionB;
      const auto all = projected_pass(stream, d_in, n, mode, p, b, regions, k, &stats);
      c = {below, all[t]};
    } else {
      c = pass(stream, d_in, n, mode, p, {lo, hi}, {kRegionA, kRegionB, kRegionNone}, k, &stats);
    }
    const std::size_t need = k - c[0];
    sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, c[1]);
    return finish(stream, d_in, p, c[0], p.sorted_b, need, req.sorted_output, stats, out_v, out_i);
  }

  SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                               const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const override {
    SelectStats stats;
    if (!start_order_statistics(n, ranks, h_out)) return stats;
    const bool oracles = !approximate_ && scheme_ == Scheme::kSplitters;
    const Plan p = lay_out(ws, stats, [&](Arena& a) { return plan(a, n, 0, ranks.size(), oracles); });
    const KeyMode mode = KeyMode::kSmallest;

    Buckets b;
    if (n <= kDirectBelow) {
      b.bounds = {kInvalidKey};
      b.equality = {false, false};
      b.nan_segment = 1;
    } else {
      b = sample_buckets(stream, d_in, n, mode, p);
    }
    const auto counts = count_pass(stream, d_in, n, mode, p, b, &stats, oracles ? p.oracles : nullptr);
    std::vector<unsigned long long> below(counts.size());
    for (std::size_t s = 1; s < counts.size(); ++s) below[s] = below[s - 1] + counts[s - 1];
    const unsigned long long n_valid = n - counts[static_cast<std::size_t>(b.nan_segment)];

    std::vector<std::uint8_t> regions(counts.size(), kRegionNone);
    std::vector<std::size_t> target(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i] >= n_valid) continue;
      const std::size_t t = static_cast<std::size_t>(
          std::upper_bound(below.begin(), below.end(), static_cast<unsigned long long>(ranks[i])) - below.begin() - 1);
      target[i] = t;
      const std::uint32_t lo = b.projected || t == 0 ? 0u : b.bounds[t - 1];
      if (b.equality[t]) {
        h_out[i] = from_ascending_bits(lo);
      } else if (approximate_) {
        h_out[i] = from_ascending_bits(std::max(lo, 0x007FFFFFu));  // the bucket's lower splitter
      } else {
        regions[t] = kRegionB;
      }
    }
    if (approximate_) return stats;
    std::vector<unsigned long long> saved_before(counts.size());
    unsigned long long total = 0;
    for (std::size_t s = 0; s < counts.size(); ++s) {
      saved_before[s] = total;
      if (regions[s] == kRegionB) total += counts[s];
    }
    if (total == 0) return stats;
    if (total > p.cap_b) {  // buckets larger than the buffer: exact radix path per rank
      ++stats.retries;
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i] >= n_valid || regions[target[i]] != kRegionB) continue;
        h_out[i] = from_ascending_bits(exact_rank_key(stream, d_in, n, mode, ranks[i] + 1, p, stats));
      }
      return stats;
    }
    if (b.projected) {
      projected_pass(stream, d_in, n, mode, p, b, regions, 0, &stats);
    } else if (!p.oracles) {  // no memo: search the bounds again
      pass(stream, d_in, n, mode, p, b.bounds, regions, 0, &stats);
    } else {
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.regions, regions.data(), regions.size(), cudaMemcpyHostToDevice, stream));
      oracle_filter(stream, d_in, n, mode, p.oracles, p.regions, static_cast<int>(regions.size()), p.buf_b, p.cap_b,
                    p.fill + 1);
      ++stats.passes;
    }
    // Each wanted rank's position in sorted R (the target buckets' keys, bucket after bucket).
    std::vector<unsigned long long> pos;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i] >= n_valid || regions[target[i]] != kRegionB) continue;
      pos.push_back(saved_before[target[i]] + (ranks[i] - below[target[i]]));
      which.push_back(i);
    }
    std::vector<std::uint32_t> keys;
    if (p.samples2 && total >= tuning_.second_level_min && total > kBitonicMax) {
      keys = second_level(stream, p, total, pos);
    } else {
      sort_u64(stream, p.b_temp, p.b_temp_bytes, p.buf_b, p.sorted_b, total, 32);
      keys = keys_at(stream, p.sorted_b, true, pos, p.scratch);
    }
    for (std::size_t q = 0; q < which.size(); ++q) h_out[which[q]] = from_ascending_bits(keys[q]);
    return stats;
  }

 private:
  // The keys at positions `pos` of sorted R = p.buf_b[0, total), by one more SampleSelect level
  // over R (step 6 above). R's keys are all valid and the counts exact, so nothing overflows:
  // the sub-buckets kept are a subset of R and fit where R did. R is not needed after the filter,
  // so the kept keys are sorted into its place.
  std::vector<std::uint32_t> second_level(cudaStream_t stream, const Plan& p, std::size_t total,
                                          const std::vector<unsigned long long>& pos) const {
    const std::size_t buckets = second_level_buckets(total);
    const std::size_t m = buckets * kOversampling;
    sample_reduced_kernel<<<reduced_grid(m), kThreads, 0, stream>>>(p.buf_b, total, 0x5EC0DD1Eull, p.samples2, m);
    GPUCLEAN_CHECK_LAUNCH();
    sort_u32(stream, p.sort_temp2, p.sort_temp2_bytes, p.samples2, p.sorted2, m);
    std::vector<std::uint32_t> sample(m);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(sample.data(), p.sorted2, m * 4, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    const Buckets b = make_buckets(sample, buckets);
    const int nb = static_cast<int>(b.bounds.size());
    const std::size_t segments = b.bounds.size() + 1;

    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.bounds, b.bounds.data(), b.bounds.size() * 4, cudaMemcpyHostToDevice, stream));
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(p.counts, 0, segments * sizeof(unsigned long long), stream));
    reduced_count_kernel<<<reduced_grid(total), kThreads, b.bounds.size() * 4 + segments * 4, stream>>>(
        p.buf_b, total, p.bounds, nb, p.counts);
    GPUCLEAN_CHECK_LAUNCH();
    std::vector<unsigned long long> counts(segments);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(counts.data(), p.counts, segments * 8, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    std::vector<unsigned long long> below(segments);
    for (std::size_t s = 1; s < segments; ++s) below[s] = below[s - 1] + counts[s - 1];

    // A position in an equality sub-bucket is answered by its key; the others mark their
    // sub-bucket for the filter.
    std::vector<std::uint32_t> keys(pos.size());
    std::vector<std::uint8_t> regions(segments, kRegionNone);
    std::vector<std::size_t> seg(pos.size());
    for (std::size_t q = 0; q < pos.size(); ++q) {
      seg[q] = static_cast<std::size_t>(std::upper_bound(below.begin(), below.end(), pos[q]) - below.begin() - 1);
      if (b.equality[seg[q]]) {
        keys[q] = b.bounds[seg[q] - 1];
      } else {
        regions[seg[q]] = kRegionB;
      }
    }
    std::vector<unsigned long long> kept_before(segments);
    unsigned long long kept = 0;
    for (std::size_t s = 0; s < segments; ++s) {
      kept_before[s] = kept;
      if (regions[s] == kRegionB) kept += counts[s];
    }
    if (kept == 0) return keys;
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.regions, regions.data(), segments, cudaMemcpyHostToDevice, stream));
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(p.fill + 1, 0, sizeof(unsigned long long), stream));
    reduced_filter_kernel<<<reduced_grid(total), kThreads, b.bounds.size() * 4 + segments, stream>>>(
        p.buf_b, total, p.bounds, nb, p.regions, p.sorted_b, p.cap_b, p.fill + 1);
    GPUCLEAN_CHECK_LAUNCH();
    sort_u64(stream, p.b_temp, p.b_temp_bytes, p.sorted_b, p.buf_b, kept, 32);
    std::vector<unsigned long long> kept_pos;
    std::vector<std::size_t> which;
    for (std::size_t q = 0; q < pos.size(); ++q) {
      if (regions[seg[q]] != kRegionB) continue;
      kept_pos.push_back(kept_before[seg[q]] + (pos[q] - below[seg[q]]));
      which.push_back(q);
    }
    const std::vector<std::uint32_t> found = keys_at(stream, p.buf_b, true, kept_pos, p.scratch);
    for (std::size_t j = 0; j < which.size(); ++j) keys[which[j]] = found[j];
    return keys;
  }

  Plan plan(Arena& a, std::size_t n, std::size_t k, std::size_t n_ranks, bool oracles) const {
    Plan p{};
    p.buckets = bucket_count(n);
    p.s = sample_count(n);
    p.samples = a.take<std::uint32_t>(p.s);
    p.sorted = a.take<std::uint32_t>(p.s);
    p.sort_temp_bytes = sort_temp_bytes_u32(p.s);
    p.sort_temp = a.take<std::byte>(p.sort_temp_bytes);
    take_pass_buffers(a, p, kMaxBounds, true);
    p.oracles = oracles ? a.take<std::uint16_t>(n) : nullptr;
    p.projection = a.take<Projection>(1);
    // A bucket holds about n / buckets elements; allow four times that per target.
    const std::size_t per_bucket = n <= kDirectBelow ? n : 4 * (n / p.buckets) + 1024;
    take_ab_buffers(a, p, k, std::min(n, per_bucket * std::max<std::size_t>(1, n_ranks)));
    take_scratch(a, p, radix_threshold_bytes() + (k ? extract_bytes(n) : 0) + 12 * n_ranks + 512);
    if (oracles && p.cap_b > kBitonicMax) {  // the second level may run: its sample and sort
      p.samples2 = a.take<std::uint32_t>(kSecondMaxSamples);
      p.sorted2 = a.take<std::uint32_t>(kSecondMaxSamples);
      p.sort_temp2_bytes = sort_temp_bytes_u32(kSecondMaxSamples);
      p.sort_temp2 = a.take<std::byte>(p.sort_temp2_bytes);
    }
    return p;
  }

  Buckets sample_buckets(cudaStream_t stream, const float* d_in, std::size_t n, KeyMode mode, const Plan& p) const {
    sample_keys(stream, d_in, n, mode, 0xB0CCE7ull, p.samples, p.s);
    sort_u32(stream, p.sort_temp, p.sort_temp_bytes, p.samples, p.sorted, p.s);
    std::vector<std::uint32_t> sample(p.s);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(sample.data(), p.sorted, p.s * 4, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    if (scheme_ == Scheme::kProjection) {
      Buckets b = make_projection(sample, p.buckets);
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.projection, &b.projection, sizeof(Projection), cudaMemcpyHostToDevice, stream));
      return b;
    }
    return make_buckets(sample, p.buckets);
  }

  // The count pass of either scheme.
  std::vector<unsigned long long> count_pass(cudaStream_t stream, const float* d_in, std::size_t n, KeyMode mode,
                                             const Plan& p, const Buckets& b, SelectStats* stats,
                                             std::uint16_t* oracles) const {
    if (b.projected) return projected_pass(stream, d_in, n, mode, p, b, {}, 0, stats);
    if (tuning_.tree_count) {
      const EytzingerTree t = make_eytzinger_tree(b.bounds);
      if (t.nodes.size() <= static_cast<std::size_t>(kMaxBounds)) return tree_count(stream, d_in, n, mode, p, b, t, stats, oracles);
    }
    return pass(stream, d_in, n, mode, p, b.bounds, {}, 0, stats, oracles);
  }

  std::vector<unsigned long long> tree_count(cudaStream_t stream, const float* d_in, std::size_t n, KeyMode mode,
                                             const Plan& p, const Buckets& b, const EytzingerTree& t,
                                             SelectStats* stats, std::uint16_t* oracles) const {
    const int n_seg = static_cast<int>(b.bounds.size()) + 1;
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.bounds, t.nodes.data(), t.nodes.size() * 4, cudaMemcpyHostToDevice, stream));
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(p.counts, 0, sizeof(unsigned long long) * n_seg, stream));
    if (n > 0) {
      switch (mode) {
        case KeyMode::kLargest: launch_tree_count<KeyMode::kLargest>(stream, d_in, n, t, p.bounds, n_seg, p.counts, oracles); break;
        case KeyMode::kSmallest: launch_tree_count<KeyMode::kSmallest>(stream, d_in, n, t, p.bounds, n_seg, p.counts, oracles); break;
        case KeyMode::kLargestAbs: launch_tree_count<KeyMode::kLargestAbs>(stream, d_in, n, t, p.bounds, n_seg, p.counts, oracles); break;
      }
    }
    ++stats->passes;
    return read_counts(stream, p.counts, static_cast<std::size_t>(n_seg));
  }

  // A pass whose segments are the projection's buckets; `regions` (one per bucket) routes them.
  std::vector<unsigned long long> projected_pass(cudaStream_t stream, const float* d_in, std::size_t n,
                                                 KeyMode mode, const Plan& p, const Buckets& b,
                                                 const std::vector<std::uint8_t>& regions, std::size_t cap_a,
                                                 SelectStats* stats) const {
    if (!regions.empty())
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.regions, regions.data(), regions.size(), cudaMemcpyHostToDevice, stream));
    SegmentPass s = filter_pass(p, d_in, n, mode, cap_a);
    s.projection = p.projection;
    s.n_projection_buckets = b.segments();
    s.regions = regions.empty() ? nullptr : p.regions;
    return run_segment_pass(stream, s, static_cast<std::size_t>(b.segments()), *stats);
  }

  // One segment pass; returns the segment counts. Empty `regions` means count only.
  std::vector<unsigned long long> pass(cudaStream_t stream, const float* d_in, std::size_t n, KeyMode mode,
                                       const Plan& p, const std::vector<std::uint32_t>& bounds,
                                       const std::vector<std::uint8_t>& regions, std::size_t cap_a,
                                       SelectStats* stats, std::uint16_t* oracles = nullptr) const {
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.bounds, bounds.data(), bounds.size() * 4, cudaMemcpyHostToDevice, stream));
    if (!regions.empty())
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(p.regions, regions.data(), regions.size(), cudaMemcpyHostToDevice, stream));
    SegmentPass s = filter_pass(p, d_in, n, mode, cap_a);
    s.bounds = p.bounds;
    s.n_bounds = static_cast<int>(bounds.size());
    s.regions = regions.empty() ? nullptr : p.regions;
    s.oracles = oracles;
    return run_segment_pass(stream, s, bounds.size() + 1, *stats);
  }

  SelectStats finish(cudaStream_t stream, const float* d_in, const Plan& p, std::size_t na, const std::uint64_t* b,
                     std::size_t nb, bool sorted, SelectStats stats, float* out_v, std::uint32_t* out_i) const {
    write_selection(stream, d_in, p, na, b, nb, sorted, out_v, out_i);
    stats.count = na + nb;
    return stats;
  }

  Scheme scheme_;
  bool approximate_;
  SampleTuning tuning_;
};

}  // namespace

std::unique_ptr<Selector> make_sample_selector() {
  return std::make_unique<BucketedSelector>(Scheme::kSplitters, false);
}
std::unique_ptr<Selector> make_sample_selector(const SampleTuning& tuning) {
  return std::make_unique<BucketedSelector>(Scheme::kSplitters, false, tuning);
}
std::unique_ptr<Selector> make_sample_approx_selector() {
  return std::make_unique<BucketedSelector>(Scheme::kSplitters, true);
}
std::unique_ptr<Selector> make_bucket_selector() {
  return std::make_unique<BucketedSelector>(Scheme::kProjection, false);
}

}  // namespace gpuclean::select

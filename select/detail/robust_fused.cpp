// The fused robust statistics, host side: the plan, the buffers, and the decisions made from
// the pass's exact counts (robust_fused.hpp).

#include "select/detail/robust_fused.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "select/cuda/cuda_check.hpp"
#include "select/detail/arena.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/rank_key.hpp"
#include "select/detail/robust_fused_kernels.hpp"

namespace gpuclean::select::detail {
namespace {

// Everything the host reads back, adjacent so that one copy brings it.
struct RobustState {
  RobustBracket bracket;
  RobustCounts counts;
  RobustAnswer answer;
};

struct Buffers {
  RobustState* state = nullptr;
  std::uint32_t *sample = nullptr, *sample_sorted = nullptr;
  std::uint32_t *median = nullptr, *median_sorted = nullptr, *band = nullptr, *band_keys = nullptr,
                *band_sorted = nullptr;
  void* sort_temp = nullptr;
  std::size_t sort_temp_bytes = 0;
};

Buffers take(Arena& a, const RobustPlan& p) {
  Buffers b;
  b.state = a.take<RobustState>(1);
  b.sample = a.take<std::uint32_t>(p.samples);
  b.sample_sorted = a.take<std::uint32_t>(p.samples);
  b.median = a.take<std::uint32_t>(p.median_cap);
  b.median_sorted = a.take<std::uint32_t>(p.median_cap);
  b.band = a.take<std::uint32_t>(p.band_cap);
  b.band_keys = a.take<std::uint32_t>(p.band_cap);
  b.band_sorted = a.take<std::uint32_t>(p.band_cap);
  b.sort_temp_bytes = sort_temp_bytes_u32(std::max({p.samples, p.median_cap, p.band_cap}));
  b.sort_temp = a.take<std::byte>(b.sort_temp_bytes);
  return b;
}

// Pinned host memory for the read-backs, one per host thread (a thread makes one call at a time).
RobustState* pinned_state() {
  struct Holder {
    RobustState* p = nullptr;
    ~Holder() {
      if (p) GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeHost(p));
    }
  };
  thread_local Holder h;
  if (!h.p) {
    void* p = nullptr;
    GPUCLEAN_CUDA_TRY(cudaHostAlloc(&p, sizeof(RobustState), cudaHostAllocPortable));
    h.p = static_cast<RobustState*>(p);
  }
  return h.p;
}

// Where rank r falls among classes of the given sizes, in order; -1 past the last.
int class_of(unsigned long long r, std::initializer_list<unsigned long long> sizes, unsigned long long* offset) {
  int i = 0;
  unsigned long long start = 0;
  for (const unsigned long long s : sizes) {
    if (r < start + s) {
      *offset = r - start;
      return i;
    }
    start += s;
    ++i;
  }
  return -1;
}

}  // namespace

RobustPlan robust_plan(std::size_t n, double z, bool deviations) {
  RobustPlan p;
  const double want = 32.0 * std::sqrt(static_cast<double>(n));
  p.samples = 4096;
  while (p.samples < (std::size_t{1} << 20) && static_cast<double>(p.samples) < want) p.samples *= 2;
  p.z = z;
  const double s = static_cast<double>(p.samples);
  const double w = std::ceil(z * std::sqrt(s) * 0.5) + 1.0;
  const double expected = static_cast<double>(n) * (2.0 * w + 2.0) / s;  // inside [lo, hi]
  p.median_cap = std::min<std::size_t>(n, static_cast<std::size_t>(2.0 * expected) + 4096);
  // The band holds both sides of the MAD's bracket, each about twice as wide as [lo, hi].
  if (deviations) p.band_cap = std::min<std::size_t>(n, static_cast<std::size_t>(8.0 * expected) + 4096);
  return p;
}

std::size_t fused_robust_bytes(std::size_t n, double z) {
  Arena a;
  take(a, robust_plan(n, z));
  return a.used();
}

std::size_t fused_rank_bytes(std::size_t n, double z) {
  Arena a;
  take(a, robust_plan(n, z, false));
  return a.used();
}

namespace {

// The sample, its sort and the pass, up to the first synchronization; returns the buffers.
Buffers sample_and_pass(cudaStream_t stream, const float* d_in, std::size_t n, const RobustPlan& plan,
                        Workspace& ws, std::uint64_t seed, const std::size_t* rank, RobustState* host,
                        SelectStats* stats) {
  Arena sizing;
  take(sizing, plan);
  const std::size_t bytes = sizing.used();
  Arena arena = arena_for(ws, bytes);
  const Buffers b = take(arena, plan);
  if (stats) *stats = SelectStats{}, stats->passes = 1, stats->scratch_bytes = bytes;
  sample_keys(stream, d_in, n, KeyMode::kSmallest, seed, b.sample, plan.samples);
  sort_u32(stream, b.sort_temp, b.sort_temp_bytes, b.sample, b.sample_sorted, plan.samples);
  if (rank)
    rank_bracket(stream, b.sample_sorted, plan.samples, plan.z, *rank, n, &b.state->bracket);
  else
    robust_brackets(stream, b.sample_sorted, plan.samples, plan.z, &b.state->bracket);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(&b.state->counts, 0, sizeof(RobustCounts), stream));
  robust_pass(stream, RobustPassArgs{d_in, n, &b.state->bracket, &b.state->counts, b.median, plan.median_cap,
                                     b.band, plan.band_cap});
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(host, b.state, sizeof(RobustState), cudaMemcpyDeviceToHost, stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  return b;
}

// Where rank `r` lies against the median bracket: a key, or an index into the sorted candidates
// (sorted here). False when the bracket missed.
bool locate(cudaStream_t stream, const Buffers& b, const RobustState& h, unsigned long long r, RobustFinishArgs& f) {
  const RobustCounts& c = h.counts;
  unsigned long long at = 0;
  switch (class_of(r, {c.below, c.eq_lo, c.median_fill, c.eq_hi}, &at)) {
    case 1: f.median_key = h.bracket.lo_key; return true;
    case 2:
      sort_u32(stream, b.sort_temp, b.sort_temp_bytes, b.median, b.median_sorted, c.median_fill);
      f.median_sorted = b.median_sorted;
      f.median_index = static_cast<long long>(at);
      return true;
    case 3: f.median_key = h.bracket.hi_key; return true;
    default: return false;  // below lo or above hi
  }
}

}  // namespace

std::optional<float> fused_order_statistic(cudaStream_t stream, const float* d_in, std::size_t n, std::size_t rank,
                                           Workspace& ws, double z, std::uint64_t seed, SelectStats* stats) {
  const RobustPlan plan = robust_plan(n, z, false);
  RobustState* const host = pinned_state();
  const Buffers b = sample_and_pass(stream, d_in, n, plan, ws, seed, &rank, host, stats);
  const RobustCounts c = host->counts;
  if (rank >= c.valid) return std::numeric_limits<float>::quiet_NaN();
  if (c.median_fill > plan.median_cap) return std::nullopt;
  RobustFinishArgs f;
  f.bracket = &b.state->bracket;
  if (!locate(stream, b, *host, rank, f)) return std::nullopt;
  if (f.median_index < 0) return from_ascending_bits(f.median_key);
  robust_finish(stream, f, &b.state->answer);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&host->answer, &b.state->answer, sizeof(RobustAnswer), cudaMemcpyDeviceToHost,
                                    stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  return from_ascending_bits(host->answer.median_key);
}

std::optional<RobustStats> fused_robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                                   Workspace& ws, double z, std::uint64_t seed,
                                                   SelectStats* stats) {
  const RobustPlan plan = robust_plan(n, z);
  RobustState* const host = pinned_state();
  const Buffers b = sample_and_pass(stream, d_in, n, plan, ws, seed, nullptr, host, stats);

  const RobustBracket br = host->bracket;
  const RobustCounts c = host->counts;
  RobustStats r;
  r.n_finite = static_cast<std::size_t>(c.valid);
  if (c.valid == 0) return r;
  if (c.median_fill > plan.median_cap || c.band_fill > plan.band_cap) return std::nullopt;
  const unsigned long long mid = (c.valid - 1) / 2;

  RobustFinishArgs f;
  f.bracket = &b.state->bracket;
  if (!locate(stream, b, *host, mid, f)) return std::nullopt;

  unsigned long long at = 0;
  if (br.fixed) {
    // The pass measured every deviation from lo, the median found above.
    switch (class_of(mid, {c.dev_low, c.dev_eq_lo, c.band_fill, c.dev_eq_hi}, &at)) {
      case 1: f.mad_key = ascending_bits(br.dlo); break;
      case 2:
        sort_u32(stream, b.sort_temp, b.sort_temp_bytes, b.band, b.band_sorted, c.band_fill);
        f.band_sorted = b.band_sorted;
        f.mad_source = MadSource::kIndex;
        f.mad_index = at;
        break;
      case 3: f.mad_key = ascending_bits(br.dhi); break;
      default: return std::nullopt;
    }
  } else {
    robust_band_deviations(stream, b.band, c.band_fill, f, b.band_keys);
    sort_u32(stream, b.sort_temp, b.sort_temp_bytes, b.band_keys, b.band_sorted, c.band_fill);
    f.band_sorted = b.band_sorted;
    f.band_count = c.band_fill;
    f.mad_source = MadSource::kSearch;
    f.inner = c.dev_low;
    f.rank = mid;
  }
  robust_finish(stream, f, &b.state->answer);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&host->answer, &b.state->answer, sizeof(RobustAnswer), cudaMemcpyDeviceToHost,
                                    stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  if (!host->answer.ok) return std::nullopt;
  r.median = from_ascending_bits(host->answer.median_key);
  r.mad = from_ascending_bits(host->answer.mad_key);
  return r;
}

}  // namespace gpuclean::select::detail

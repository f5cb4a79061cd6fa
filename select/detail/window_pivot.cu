// The window chain's pivot step: one block samples S keys, finds the sample's order statistics
// at the window's ends and centre, and writes the window plan (see window_select.hpp).

#include <stdexcept>

#include "select/cuda/cuda_check.hpp"
#include "select/detail/window_device.cuh"
#include "select/detail/window_kernels.hpp"
#include "select/detail/window_logic.hpp"

namespace gpuclean::select::detail {
namespace {

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
  std::uint32_t key[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const std::uint64_t j = threadIdx.x + static_cast<std::uint64_t>(i) * kPivotThreads;
    const std::uint64_t h = mix64(a.seed + 0x9E3779B97F4A7C15ull * (j + 1));
    key[i] = window_key<K>(__float_as_uint(__ldg(a.in + __umul64hi(h, a.n))));
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

  const long long first = a.first, last = a.last;
  const long long rank[3] = {first < 0 ? 0 : first, a.centre, last >= kS ? 0 : last};

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
  *a.plan = make_plan(in);
}

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

}  // namespace

void launch_window_pivot(cudaStream_t stream, WindowKey key, int samples, const PivotParams& pp) {
  switch (key) {
    case WindowKey::kLargest: launch_pivot<WindowKey::kLargest>(stream, samples, pp); break;
    case WindowKey::kSmallest: launch_pivot<WindowKey::kSmallest>(stream, samples, pp); break;
    case WindowKey::kLargestAbs: launch_pivot<WindowKey::kLargestAbs>(stream, samples, pp); break;
  }
}

}  // namespace gpuclean::select::detail

// The window chain's pivot step: one block samples S keys, finds the sample's order statistics
// at the window's ends and centre (a radix select, a byte a round), and writes the window plan
// (see window_select.hpp).

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

  // The sample's order statistics at the three ranks (the rank-th smallest key), a byte a round
  // from the highest bit in which the keys differ: a shared histogram of the round's digit for
  // each distinct prefix of the three, then one warp a rank reads its digit off a scan. A key
  // shares its prefix with at most one histogram; a warp's equal bins are added once (match_any),
  // so runs of equal keys do not serialise on one bin.
  __shared__ unsigned s_hist[3][256];
  __shared__ unsigned s_res[3], s_before[3];
  unsigned res[3];
  const int hb = mn == mx ? -1 : 31 - __clz(mn ^ mx);
  const unsigned pre = hb < 0 ? mn : static_cast<unsigned>(mn & ~((2ull << hb) - 1ull));
  res[0] = res[1] = res[2] = pre;
  unsigned before[3] = {0u, 0u, 0u};  // sample keys below the rank's current prefix
  for (int shift = hb < 0 ? -8 : (hb >> 3) << 3; shift >= 0; shift -= 8) {
    // The histogram of rank j is that of the first rank with the same prefix (the bits above the digit).
    const auto prefix = [&](unsigned x) { return static_cast<unsigned>(static_cast<std::uint64_t>(x) >> (shift + 8)); };
    const int owner1 = prefix(res[1]) == prefix(res[0]) ? 0 : 1;
    const int owner2 = prefix(res[2]) == prefix(res[0]) ? 0 : prefix(res[2]) == prefix(res[1]) ? owner1 : 2;
    for (int i = static_cast<int>(threadIdx.x); i < 3 * 256; i += kPivotThreads) (&s_hist[0][0])[i] = 0;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const unsigned pk = prefix(key[i]), digit = (key[i] >> shift) & 0xFFu;
      const int h = pk == prefix(res[0]) ? 0 : pk == prefix(res[1]) ? owner1 : pk == prefix(res[2]) ? owner2 : -1;
      const int bin = h < 0 ? -1 : h * 256 + static_cast<int>(digit);
      const unsigned peers = __match_any_sync(kFullMask, bin);
      if (bin >= 0 && lane_id() == __ffs(peers) - 1) atomicAdd(&s_hist[0][0] + bin, static_cast<unsigned>(__popc(peers)));
    }
    __syncthreads();
    const int w = static_cast<int>(threadIdx.x >> 5);
    if (w < 3) {
      const int h = w == 0 ? 0 : w == 1 ? owner1 : owner2;
      const int ln = lane_id();
      unsigned c[8], sum = 0;
#pragma unroll
      for (int d = 0; d < 8; ++d) {
        c[d] = s_hist[h][8 * ln + d];
        sum += c[d];
      }
      unsigned incl = sum;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const unsigned up = __shfl_up_sync(kFullMask, incl, o);
        if (ln >= o) incl += up;
      }
      // The digit: the first bin whose running count passes the rank within the prefix.
      const unsigned target = static_cast<unsigned>(rank[w]) - before[w];
      const unsigned owner = __ballot_sync(kFullMask, incl > target);
      const int lane = __ffs(owner) - 1;  // the rank is below the prefix's count: some lane holds it
      if (ln == lane) {
        unsigned below = incl - sum;
        int d = 0;
#pragma unroll
        for (int e = 0; e < 7; ++e) {  // static indices: c stays in registers
          if (d == e && below + c[e] <= target) {
            below += c[e];
            d = e + 1;
          }
        }
        s_res[w] = (res[w] & ~(0xFFu << shift)) | (static_cast<unsigned>(8 * lane + d) << shift);
        s_before[w] = before[w] + below;
      }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      res[j] = s_res[j];
      before[j] = s_before[j];
    }
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

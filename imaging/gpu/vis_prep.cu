// Per-chunk preparation (imaging-plan.md §4.4): keys, CUB radix sort, records in sorted order,
// tile subproblems and the per-first-plane offsets the plane sweep needs.
//   1. make_keys: flip, Ku/Kv/Kw in double, key = (p0 group, 32-cell tile row, tile column);
//   2. SortPairs (key, chunk position): stable, so equal keys keep the host's order, which is
//      invert_cpu's stable sort (p0, tile row, tile column, caller's position);
//   3. build_records: footprint start cells, offsets du/dv/kw, and the values to grid;
//   4. invert only: a subproblem starts at every segment of equal keys and every 1024 samples
//      inside one (segment_heads → max-scan → subproblem_flags → DeviceSelect::Flagged);
//   5. group_offsets: binary searches per first plane, downloaded with one synchronisation.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <stdexcept>

#include "imaging/gpu/es_device.cuh"
#include "imaging/gpu/gridder_device.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::imaging::gpu {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 1u << 20));
}

// A sample in grid units after the flip to w ≥ 0: (u, v, w, V) → (−u, −v, −w, V̄) when w < 0.
struct Located {
  bool flip;
  double ku, kv, kw;
};

__device__ Located locate(const DeviceGeometry& g, double u, double v, double w) {
  const bool flip = g.wstacking && w < 0;
  const double sign = flip ? -1 : 1;
  return {flip, -sign * u * g.su, sign * v * g.sv, g.wstacking ? (fabs(w) - g.w0) / g.dw : 0.0};
}

__device__ long long floor_cell(double k) { return static_cast<long long>(floor(k)); }

__device__ int wrap(long long c, int n) {
  const long long m = c % n;
  return static_cast<int>(m < 0 ? m + n : m);
}

__global__ void make_keys(std::size_t n, RawChunk raw, DeviceGeometry g, KeyLayout layout, std::uint64_t* key,
                          std::uint32_t* index) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const Located s = locate(g, raw.u[i], raw.v[i], raw.w[i]);
    const int p0 = g.wstacking ? max(0, static_cast<int>(ceil(s.kw - 0.5 * g.support))) : 0;
    // The host ordered by the same p0; the clamp only guards the key's field.
    const auto group = static_cast<std::uint64_t>(min(max(p0 - layout.p0_base, 0), layout.groups - 1));
    const auto tu = static_cast<std::uint64_t>(wrap(floor_cell(s.ku), g.nu) / kTile);
    const auto tv = static_cast<std::uint64_t>(wrap(floor_cell(s.kv), g.nv) / kTile);
    key[i] = group << (layout.bits_u + layout.bits_v) | tv << layout.bits_u | tu;
    index[i] = static_cast<std::uint32_t>(i);
  }
}

struct RecordsOut {
  double *du, *dv, *kw;
  int *iu, *iv;
  float2* value[2];
};

// dirty/psf select the values: value[0] is the first one asked for.
__global__ void build_records(std::size_t n, RawChunk raw, DeviceGeometry g, const std::uint32_t* index,
                              RecordsOut out, bool dirty, bool psf) {
  const double h = 0.5 * g.support;
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t k = index[j];
    const double w = raw.w[k];
    const Located s = locate(g, raw.u[k], raw.v[k], w);
    // Footprint cells iu0 + a = ⌈Ku − h⌉ + a with weights φ((iu0 + a − Ku)/h) = φ((a − du)/h),
    // shifted by the multiple of nu that brings ⌊Ku⌋ into [0, nu) (the tile the key names).
    const long long iu0 = static_cast<long long>(ceil(s.ku - h)), iv0 = static_cast<long long>(ceil(s.kv - h));
    const long long fu = floor_cell(s.ku), fv = floor_cell(s.kv);
    out.iu[j] = static_cast<int>(iu0 - (fu - wrap(fu, g.nu)));
    out.iv[j] = static_cast<int>(iv0 - (fv - wrap(fv, g.nv)));
    out.du[j] = s.ku - static_cast<double>(iu0);
    out.dv[j] = s.kv - static_cast<double>(iv0);
    out.kw[j] = s.kw;
    if (out.value[0] == nullptr) continue;  // predict: no values
    // cw·V, conjugated when flipped, × e^{+2πi |w| nshift} (the plane screens see a symmetric t).
    double c = 1, sn = 0;
    if (g.wstacking) sincospi(2 * (fabs(w) * g.nshift), &sn, &c);
    const double cw = raw.weight[k];
    const float2 psf_value = make_float2(static_cast<float>(cw * c), static_cast<float>(cw * sn));
    int slot = 0;
    if (dirty) {
      const float2 vis = raw.vis[k];
      const double re = vis.x, im = s.flip ? -static_cast<double>(vis.y) : static_cast<double>(vis.y);
      out.value[slot++][j] = make_float2(static_cast<float>(cw * (re * c - im * sn)),
                                         static_cast<float>(cw * (re * sn + im * c)));
    }
    if (psf) out.value[slot][j] = psf_value;
  }
}

// seg_start[j] = j where a run of equal keys starts, 0 elsewhere (a max-scan then gives each
// sample its run's start).
__global__ void segment_heads(std::size_t n, const std::uint64_t* key, std::uint32_t* seg_start) {
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    seg_start[j] = (j == 0 || key[j] != key[j - 1]) ? static_cast<std::uint32_t>(j) : 0u;
}

__global__ void subproblem_flags(std::size_t n, const std::uint32_t* seg_start, std::uint8_t* flag) {
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    flag[j] = (j - seg_start[j]) % kMaxSubproblem == 0;
}

// offsets[g] (g ≤ groups): first sample of group ≥ g; offsets[groups + 1 + g]: first subproblem
// of group ≥ g; offsets[2·groups + 2]: the subproblem count. Also closes sub_start with n.
__global__ void group_offsets(std::size_t n, int groups, int shift, const std::uint64_t* key,
                              std::uint32_t* sub_start, const std::uint32_t* sub_count, std::uint32_t* offsets) {
  const std::uint32_t subs = sub_count ? *sub_count : 0;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0 && sub_count) sub_start[subs] = static_cast<std::uint32_t>(n);
  if (i == 0) offsets[2 * groups + 2] = subs;
  if (i > groups) return;
  const std::uint64_t bound = static_cast<std::uint64_t>(i) << shift;
  std::size_t lo = 0, hi = n;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (key[mid] < bound) lo = mid + 1; else hi = mid;
  }
  offsets[i] = static_cast<std::uint32_t>(lo);
  if (!sub_count) {
    offsets[groups + 1 + i] = 0;
    return;
  }
  std::uint32_t a = 0, b = subs;
  while (a < b) {
    const std::uint32_t mid = (a + b) / 2;
    if (key[sub_start[mid]] < bound) a = mid + 1; else b = mid;
  }
  offsets[groups + 1 + i] = a;
}

__global__ void finish_predict_kernel(std::size_t n, DeviceGeometry g, const std::uint32_t* index, const double* w,
                                      const double2* acc, double2* out) {
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t k = index[j];
    double2 v = acc[j];
    if (g.wstacking) {
      double c, s;  // × e^{−2πi |w| nshift}
      sincospi(2 * (fabs(w[k]) * g.nshift), &s, &c);
      v = make_double2(v.x * c + v.y * s, v.y * c - v.x * s);
      if (w[k] < 0) v.y = -v.y;  // conjugate back the flipped samples
    }
    out[k] = v;
  }
}

std::size_t sort_temp(std::size_t n) {
  std::size_t bytes = 0;
  cub::DoubleBuffer<std::uint64_t> keys(nullptr, nullptr);
  cub::DoubleBuffer<std::uint32_t> values(nullptr, nullptr);
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, static_cast<int>(n), 0, 64));
  return bytes;
}

std::size_t scan_temp(std::size_t n) {
  std::size_t bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceScan::InclusiveScan(nullptr, bytes, static_cast<std::uint32_t*>(nullptr),
                                                   static_cast<std::uint32_t*>(nullptr), ::cuda::maximum<>{},
                                                   static_cast<int>(n)));
  return bytes;
}

std::size_t select_temp(std::size_t n) {
  std::size_t bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, bytes, thrust::counting_iterator<std::uint32_t>(0),
                                               static_cast<const std::uint8_t*>(nullptr),
                                               static_cast<std::uint32_t*>(nullptr),
                                               static_cast<std::uint32_t*>(nullptr), static_cast<int>(n)));
  return bytes;
}

}  // namespace

std::size_t prep_temp_bytes(std::size_t capacity) {
  const std::size_t n = std::max<std::size_t>(capacity, 1);
  return std::max({sort_temp(n), scan_temp(n), select_temp(n), std::size_t{256}});
}

ChunkIndex prepare_chunk(cudaStream_t stream, const DeviceGeometry& g, const KeyLayout& layout, std::size_t n,
                         ChunkWork& work, bool dirty, bool psf) {
  if (n == 0 || n > work.capacity) throw std::logic_error("prepare_chunk: chunk size outside 1..capacity");
  const unsigned blocks = blocks_for(n);
  make_keys<<<blocks, kThreads, 0, stream>>>(n, work.raw(), g, layout, work.key[0].data(), work.index[0].data());
  GPUCLEAN_CHECK_LAUNCH();
  work.current = 0;
  if (layout.end_bit() > 0) {
    cub::DoubleBuffer<std::uint64_t> keys(work.key[0].data(), work.key[1].data());
    cub::DoubleBuffer<std::uint32_t> values(work.index[0].data(), work.index[1].data());
    std::size_t bytes = work.temp.bytes();
    GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(work.temp.data(), bytes, keys, values, static_cast<int>(n), 0,
                                                      layout.end_bit(), stream));
    work.current = keys.selector;
    if (values.selector != keys.selector) throw std::logic_error("prepare_chunk: CUB left keys and values apart");
  }
  const std::uint64_t* key = work.key[work.current].data();
  const std::uint32_t* index = work.index[work.current].data();
  RecordsOut out{work.du.data(), work.dv.data(), work.kw.data(), work.iu.data(), work.iv.data(), {nullptr, nullptr}};
  if (work.invert) {
    out.value[0] = work.value[0].data();
    if (dirty && psf) out.value[1] = work.value[1].data();
  }
  build_records<<<blocks, kThreads, 0, stream>>>(n, work.raw(), g, index, out, dirty, psf);
  GPUCLEAN_CHECK_LAUNCH();

  std::uint32_t* offsets = work.offsets.data();
  const std::uint32_t* sub_count = nullptr;
  if (work.invert) {
    std::uint32_t* seg = work.seg_start.data();
    segment_heads<<<blocks, kThreads, 0, stream>>>(n, key, seg);
    GPUCLEAN_CHECK_LAUNCH();
    std::size_t bytes = work.temp.bytes();
    GPUCLEAN_CUDA_TRY(cub::DeviceScan::InclusiveScan(work.temp.data(), bytes, seg, seg, ::cuda::maximum<>{},
                                                     static_cast<int>(n), stream));
    subproblem_flags<<<blocks, kThreads, 0, stream>>>(n, seg, work.sub_flag.data());
    GPUCLEAN_CHECK_LAUNCH();
    bytes = work.temp.bytes();
    std::uint32_t* count = offsets + 2 * layout.groups + 3;  // scratch slot past the offsets
    GPUCLEAN_CUDA_TRY(cub::DeviceSelect::Flagged(work.temp.data(), bytes, thrust::counting_iterator<std::uint32_t>(0),
                                                 work.sub_flag.data(), work.sub_start.data(), count,
                                                 static_cast<int>(n), stream));
    sub_count = count;
  }
  const int entries = layout.groups + 1;
  group_offsets<<<(entries + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      n, layout.groups, layout.shift(), key, work.sub_start.data(), sub_count, offsets);
  GPUCLEAN_CHECK_LAUNCH();
  std::vector<std::uint32_t> host(2 * static_cast<std::size_t>(entries) + 1);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(host.data(), offsets, host.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                    stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  ChunkIndex index_out;
  index_out.sample_offset.assign(host.begin(), host.begin() + entries);
  index_out.sub_offset.assign(host.begin() + entries, host.begin() + 2 * entries);
  return index_out;
}

void finish_predict(cudaStream_t stream, const DeviceGeometry& g, const Records& r, const double* w, std::size_t n,
                    const double2* acc, double2* out) {
  if (n == 0) return;
  finish_predict_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, g, r.index, w, acc, out);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::imaging::gpu

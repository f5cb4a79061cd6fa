// The default robust_statistics: a finite copy with its count, the median by the backend's own
// order statistics, the absolute deviations in place, and the same rank again. Two selection
// calls and two host round trips; backends that can chain the second selection on the device
// override it.

#include <math_constants.h>

#include <algorithm>

#include "select/cuda/cuda_check.hpp"
#include "select/detail/engine.hpp"
#include "select/selector.hpp"

namespace gpuclean::select {
namespace {

constexpr int kThreads = 256;

__global__ void finite_copy_count_kernel(const float* in, std::size_t n, float* out, unsigned long long* count) {
  unsigned mine = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = in[i];
    const bool finite = isfinite(v);
    out[i] = finite ? v : CUDART_NAN_F;
    mine += finite;
  }
  for (int o = 16; o > 0; o >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, o);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(count, static_cast<unsigned long long>(mine));
}

__global__ void abs_deviation_kernel(float* buf, std::size_t n, float center) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    buf[i] = fabsf(buf[i] - center);  // NaN stays NaN
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>((n + kThreads - 1) / kThreads, detail::streaming_blocks())));
}

std::size_t copy_bytes(std::size_t n) { return (n * sizeof(float) + 255) / 256 * 256 + 256; }

}  // namespace

std::size_t Selector::robust_statistics_workspace_bytes(std::size_t n) const {
  return copy_bytes(n) + order_statistics_workspace_bytes(n, 1);
}

RobustStats Selector::robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n, Workspace& ws,
                                        SelectStats* stats) const {
  RobustStats r;
  if (stats) *stats = SelectStats{};
  if (n == 0) return r;
  std::byte* base = ws.reserve(copy_bytes(n));
  auto* copy = reinterpret_cast<float*>(base);
  auto* d_count = reinterpret_cast<unsigned long long*>(base + copy_bytes(n) - 256);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof(unsigned long long), stream));
  finite_copy_count_kernel<<<grid_for(n), kThreads, 0, stream>>>(d_in, n, copy, d_count);
  GPUCLEAN_CHECK_LAUNCH();
  unsigned long long finite = 0;
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&finite, d_count, sizeof finite, cudaMemcpyDeviceToHost, stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  r.n_finite = static_cast<std::size_t>(finite);
  if (finite == 0) return r;
  const std::size_t mid = (r.n_finite - 1) / 2;
  Workspace& inner = ws.nested();
  const SelectStats a = order_statistics(stream, copy, n, {mid}, inner, &r.median);
  abs_deviation_kernel<<<grid_for(n), kThreads, 0, stream>>>(copy, n, r.median);
  GPUCLEAN_CHECK_LAUNCH();
  const SelectStats b = order_statistics(stream, copy, n, {mid}, inner, &r.mad);
  if (stats) {
    stats->passes = a.passes + b.passes + 2;
    stats->retries = a.retries + b.retries;
    stats->scratch_bytes = copy_bytes(n) + std::max(a.scratch_bytes, b.scratch_bytes);
  }
  return r;
}

}  // namespace gpuclean::select

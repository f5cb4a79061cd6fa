// The k = 1 top-k: each block's least (rank key << 32 | index) composite, one atomicMin each,
// then one thread writes the element. One wave of blocks, each thread with four float4 loads in
// flight, so that the read runs at the memory's rate.

#include "select/detail/top1.hpp"

#include <algorithm>

#include "select/cuda/cuda_check.hpp"
#include "select/cuda/per_device.hpp"
#include "select/cuda/warp_util.cuh"

namespace gpuclean::select::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
// NaN's composite (kInvalidKey) sorts after every valid one, so the least is NaN only when all are.
template <KeyMode M>
__device__ __forceinline__ unsigned long long composite_of(std::uint32_t bits, std::size_t index) {
  return composite(rank_key_bits<M>(bits), static_cast<std::uint32_t>(index));
}

template <KeyMode M>
__global__ void __launch_bounds__(kThreads) top1_kernel(const float* in, std::size_t n, unsigned long long* best) {
  __shared__ unsigned long long s_best[kThreads / 32];
  unsigned long long b = ~0ull;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kThreads;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(in) & 15u) == 0;
  const std::size_t n_vec = aligned ? n / 4 : 0;
  const uint4* in4 = reinterpret_cast<const uint4*>(in);
  for (std::size_t base = tid; base < n_vec; base += threads * kUnroll) {
    uint4 q[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = base + u * threads;
      q[u] = v < n_vec ? __ldcs(in4 + v) : make_uint4(0x7FC00000u, 0x7FC00000u, 0x7FC00000u, 0x7FC00000u);  // NaN
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t i = 4 * (base + u * threads);
      b = min(b, min(min(composite_of<M>(q[u].x, i), composite_of<M>(q[u].y, i + 1)),
                     min(composite_of<M>(q[u].z, i + 2), composite_of<M>(q[u].w, i + 3))));
    }
  }
  for (std::size_t i = 4 * n_vec + tid; i < n; i += threads) b = min(b, composite_of<M>(__float_as_uint(__ldcs(in + i)), i));
  b = cuda::warp_min64(b);
  if ((threadIdx.x & 31) == 0) s_best[threadIdx.x >> 5] = b;
  __syncthreads();
  if (threadIdx.x < 32) {
    b = cuda::warp_min64(threadIdx.x < kThreads / 32 ? s_best[threadIdx.x] : ~0ull);
    if (threadIdx.x == 0) atomicMin(best, b);
  }
}

__global__ void top1_finish(const float* in, const unsigned long long* best, float* out_value,
                            std::uint32_t* out_index, WindowResult* result) {
  const unsigned long long b = *best;
  const bool found = composite_key(b) != kInvalidKey;
  if (found) {
    const std::uint32_t index = composite_index(b);
    out_index[0] = index;
    out_value[0] = in[index];
  }
  result->count = found ? 1ull : 0ull;
  __threadfence_system();
  result->status = kWindowOk;
}

template <KeyMode M>
int top1_grid() {
  static cuda::PerDeviceInt cache{};
  return cuda::one_wave_grid(cache, top1_kernel<M>, kThreads);
}

template <KeyMode M>
void launch(cudaStream_t stream, const float* in, std::size_t n, unsigned long long* best) {
  // Small inputs need fewer blocks than a wave: a thread per four float4.
  const std::size_t wanted = (n + 16 * kThreads - 1) / (16 * kThreads);
  const int grid = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(top1_grid<M>()), std::max<std::size_t>(wanted, 1)));
  top1_kernel<M><<<grid, kThreads, 0, stream>>>(in, n, best);
}

}  // namespace

void launch_top1(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, unsigned long long* scratch,
                 float* out_value, std::uint32_t* out_index, WindowResult* result) {
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(scratch, 0xFF, sizeof(unsigned long long), stream));
  switch (mode) {
    case KeyMode::kLargest: launch<KeyMode::kLargest>(stream, in, n, scratch); break;
    case KeyMode::kSmallest: launch<KeyMode::kSmallest>(stream, in, n, scratch); break;
    case KeyMode::kLargestAbs: launch<KeyMode::kLargestAbs>(stream, in, n, scratch); break;
  }
  GPUCLEAN_CUDA_TRY(cudaGetLastError());
  top1_finish<<<1, 1, 0, stream>>>(in, scratch, out_value, out_index, result);
  GPUCLEAN_CUDA_TRY(cudaGetLastError());
}

}  // namespace gpuclean::select::detail

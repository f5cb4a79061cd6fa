// sort-and-choose: radix-sort (key, index) pairs of the whole input with CUB and take the first k.
// CUB's radix sort is stable, so equal keys keep index order: the tie rule for free. The
// baseline every other backend is measured against; it needs 16 bytes of scratch per element.

#include <cub/cub.cuh>

#include <algorithm>
#include <limits>
#include <vector>

#include "select/backends/backends.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/detail/engine.hpp"

namespace gpuclean::select {
namespace {

using namespace detail;

__global__ void make_pairs_kernel(const float* in, std::size_t n, KeyMode mode, std::uint32_t* keys,
                                  std::uint32_t* indices, unsigned long long* invalid) {
  unsigned local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t k = rank_key(in[i], mode);
    keys[i] = k;
    if (indices) indices[i] = static_cast<std::uint32_t>(i);
    local += k == kInvalidKey;
  }
  if (local) atomicAdd(invalid, static_cast<unsigned long long>(local));
}

__global__ void gather_pairs_kernel(const float* in, const std::uint32_t* indices, std::size_t count, float* out_values,
                                    std::uint32_t* out_indices) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out_indices[i] = indices[i];
    out_values[i] = in[indices[i]];
  }
}

__global__ void gather_keys_kernel(const std::uint32_t* sorted, const unsigned long long* ranks, std::size_t count,
                                   std::uint32_t* out) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = sorted[ranks[i]];
}

std::size_t pairs_temp_bytes(std::size_t n) {
  std::size_t bytes = 0;
  GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                                    static_cast<std::uint32_t*>(nullptr),
                                                    static_cast<const std::uint32_t*>(nullptr),
                                                    static_cast<std::uint32_t*>(nullptr), n));
  return bytes;
}

class SortSelector final : public Selector {
 public:
  std::string_view name() const override { return "sort"; }

  std::size_t top_k_workspace_bytes(std::size_t n, std::size_t) const override {
    Arena a;
    plan_top_k(a, n);
    return a.used();
  }
  std::size_t order_statistics_workspace_bytes(std::size_t n, std::size_t n_ranks) const override {
    Arena a;
    plan_order(a, n, n_ranks);
    return a.used();
  }

  SelectStats run_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& req,
                        Workspace& ws, float* d_out_values, std::uint32_t* d_out_indices) const override {
    SelectStats stats;
    if (n == 0 || req.k == 0) return stats;
    const std::size_t bytes = top_k_workspace_bytes(n, req.k);
    Arena a = arena_for(ws, bytes);
    TopKBuffers b = plan_top_k(a, n);
    stats.scratch_bytes = bytes;
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(b.invalid, 0, sizeof(unsigned long long), stream));
    make_pairs_kernel<<<streaming_blocks(), 256, 0, stream>>>(d_in, n, key_mode(req.order), b.keys_in, b.idx_in, b.invalid);
    GPUCLEAN_CHECK_LAUNCH();
    std::size_t temp = b.temp_bytes;
    GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(b.temp, temp, b.keys_in, b.keys_out, b.idx_in, b.idx_out, n, 0,
                                                      32, stream));
    unsigned long long invalid = 0;
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&invalid, b.invalid, sizeof invalid, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    stats.count = std::min<std::size_t>(req.k, n - invalid);
    stats.passes = 1;
    if (stats.count) {
      gather_pairs_kernel<<<static_cast<unsigned>(std::min<std::size_t>((stats.count + 255) / 256, 4096)), 256, 0, stream>>>(
          d_in, b.idx_out, stats.count, d_out_values, d_out_indices);
      GPUCLEAN_CHECK_LAUNCH();
    }
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    return stats;
  }

  SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                               const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const override {
    SelectStats stats;
    std::fill(h_out, h_out + ranks.size(), std::numeric_limits<float>::quiet_NaN());
    if (n == 0 || ranks.empty()) return stats;
    const std::size_t bytes = order_statistics_workspace_bytes(n, ranks.size());
    Arena a = arena_for(ws, bytes);
    OrderBuffers b = plan_order(a, n, ranks.size());
    stats.scratch_bytes = bytes;
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(b.invalid, 0, sizeof(unsigned long long), stream));
    make_pairs_kernel<<<streaming_blocks(), 256, 0, stream>>>(d_in, n, KeyMode::kSmallest, b.keys_in, nullptr, b.invalid);
    GPUCLEAN_CHECK_LAUNCH();
    std::size_t temp = b.temp_bytes;
    GPUCLEAN_CUDA_TRY(cub::DeviceRadixSort::SortKeys(b.temp, temp, b.keys_in, b.keys_out, n, 0, 32, stream));
    // NaN keys sort last, so rank r < n_valid reads position r directly.
    std::vector<unsigned long long> pos(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) pos[i] = std::min<std::size_t>(ranks[i], n - 1);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(b.ranks, pos.data(), pos.size() * sizeof(unsigned long long),
                                      cudaMemcpyHostToDevice, stream));
    gather_keys_kernel<<<static_cast<unsigned>((ranks.size() + 255) / 256), 256, 0, stream>>>(b.keys_out, b.ranks,
                                                                                             ranks.size(), b.picked);
    GPUCLEAN_CHECK_LAUNCH();
    std::vector<std::uint32_t> keys(ranks.size());
    unsigned long long invalid = 0;
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(keys.data(), b.picked, keys.size() * 4, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&invalid, b.invalid, sizeof invalid, cudaMemcpyDeviceToHost, stream));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (ranks[i] < n - invalid) h_out[i] = from_ascending_bits(keys[i]);
    stats.passes = 1;
    return stats;
  }

 private:
  struct TopKBuffers {
    std::uint32_t *keys_in, *keys_out, *idx_in, *idx_out;
    unsigned long long* invalid;
    void* temp;
    std::size_t temp_bytes;
  };
  struct OrderBuffers {
    std::uint32_t *keys_in, *keys_out, *picked;
    unsigned long long *invalid, *ranks;
    void* temp;
    std::size_t temp_bytes;
  };
  static TopKBuffers plan_top_k(Arena& a, std::size_t n) {
    TopKBuffers b;
    b.keys_in = a.take<std::uint32_t>(n);
    b.keys_out = a.take<std::uint32_t>(n);
    b.idx_in = a.take<std::uint32_t>(n);
    b.idx_out = a.take<std::uint32_t>(n);
    b.invalid = a.take<unsigned long long>(1);
    b.temp_bytes = pairs_temp_bytes(n);
    b.temp = a.take<std::byte>(b.temp_bytes);
    return b;
  }
  static OrderBuffers plan_order(Arena& a, std::size_t n, std::size_t n_ranks) {
    OrderBuffers b;
    b.keys_in = a.take<std::uint32_t>(n);
    b.keys_out = a.take<std::uint32_t>(n);
    b.picked = a.take<std::uint32_t>(n_ranks);
    b.invalid = a.take<unsigned long long>(1);
    b.ranks = a.take<unsigned long long>(n_ranks);
    b.temp_bytes = sort_temp_bytes_u32(n);
    b.temp = a.take<std::byte>(b.temp_bytes);
    return b;
  }
};

}  // namespace

std::unique_ptr<Selector> make_sort_selector() { return std::make_unique<SortSelector>(); }

}  // namespace gpuclean::select

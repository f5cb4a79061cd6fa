// The CPU reference behind the Selector interface: copies the input to the host and runs
// cpu_reference.hpp. It lets the per-cycle comparison and the tests treat it like any backend.

#include <vector>

#include "select/backends/backends.hpp"
#include "select/cpu_reference.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::select {
namespace {

std::vector<float> to_host(cudaStream_t stream, const float* d_in, std::size_t n) {
  std::vector<float> h(n);
  if (n) GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(h.data(), d_in, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  return h;
}

class CpuSelector final : public Selector {
 public:
  std::string_view name() const override { return "cpu"; }
  std::size_t top_k_workspace_bytes(std::size_t, std::size_t) const override { return 0; }
  std::size_t order_statistics_workspace_bytes(std::size_t, std::size_t) const override { return 0; }

  SelectStats run_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& request,
                        Workspace&, float* d_out_values, std::uint32_t* d_out_indices) const override {
    const std::vector<float> h = to_host(stream, d_in, n);
    const TopK top = top_k_cpu(h, request);
    const std::size_t c = top.indices.size();
    if (c) {
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_out_values, top.values.data(), c * sizeof(float), cudaMemcpyHostToDevice, stream));
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_out_indices, top.indices.data(), c * sizeof(std::uint32_t),
                                        cudaMemcpyHostToDevice, stream));
    }
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    return {c, 0, 0, 1};
  }

  SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                               const std::vector<std::size_t>& ranks, Workspace&, float* h_out) const override {
    const std::vector<float> h = to_host(stream, d_in, n);
    const std::vector<float> v = multiselect_cpu(h, ranks);
    std::copy(v.begin(), v.end(), h_out);
    return {0, 0, 0, 1};
  }
};

}  // namespace

std::unique_ptr<Selector> make_cpu_selector() { return std::make_unique<CpuSelector>(); }

}  // namespace gpuclean::select

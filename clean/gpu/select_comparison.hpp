#pragma once
// --compare-select: every exact GPU selection backend (and the CPU reference when asked) answers
// the major cycle's request on the same residual; their sets must be the one CLEAN goes on with,
// and their times are recorded. The comparison only reads the residual, so CLEAN is unchanged.

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/selector.hpp"

namespace gpuclean::clean::gpu {

/// Backends compared: `sort` (the baseline) first, then every other exact GPU backend in the
/// registry's order except `auto` (a dispatcher over them), then `cpu` when asked.
std::vector<std::string> compared_backends(bool with_cpu);

class SelectComparison {
 public:
  SelectComparison(cudaStream_t stream, const CleanSettings& settings, std::size_t k_max);
  ~SelectComparison();

  /// Runs every backend on d_in[0, n) with `request` and checks its set against `chosen`
  /// (device indices, `chosen_count` of them, from settings.select_backend). Throws
  /// SelectMismatch naming the cycle and the backends when a set differs.
  SelectCycleComparison run(std::size_t cycle, const float* d_in, std::size_t n, const select::SelectRequest& request,
                            const std::uint32_t* d_chosen, std::size_t chosen_count);

  /// Timed repeats per backend and cycle (the median is kept).
  static constexpr int kRepeats = 3;

 private:
  struct Entry;
  cudaStream_t stream_;
  std::string chosen_name_;
  std::vector<std::unique_ptr<Entry>> entries_;
  cuda::DeviceBuffer<float> values_;
  cuda::DeviceBuffer<std::uint32_t> indices_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  bool warmed_up_ = false;
};

}  // namespace gpuclean::clean::gpu

#pragma once
// Host pieces the GPU gridder's drivers share (gridder_gpu.cpp's single calls and the VisStore's
// resident channels, vis_store_gpu.cpp): pinned staging kept across calls, the kernel's axis
// corrections, the plane groups a sweep visits, and the device budget.

#include <cuda_runtime.h>

#include <complex>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "imaging/gpu/gridder_device.hpp"
#include "imaging/gpu/gridder_gpu.hpp"
#include "imaging/gpu/sample_order.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/pinned_staging.hpp"

namespace gpuclean::imaging::gpu {

// Pinned staging kept across calls: cudaMallocHost and cudaFreeHost of its two 8 MiB chunks cost
// several milliseconds per call (most of predict's "upload" at 2048²). One lease per user, so two
// threads never share a staging; its events belong to the device it was made on.
class StagingLease {
 public:
  explicit StagingLease(int device);
  ~StagingLease();
  StagingLease(const StagingLease&) = delete;
  StagingLease& operator=(const StagingLease&) = delete;
  cuda::PinnedStaging& get() { return *staging_; }

 private:
  int device_;
  std::unique_ptr<cuda::PinnedStaging> staging_;
};

/// A chunk's samples gathered on the host in the device's order.
struct HostChunk {
  std::vector<double> u, v, w;
  std::vector<std::complex<float>> vis;
  std::vector<float> weight;
};
/// Gathers chunk `c` of `order` from `s` (vis and weight only when asked for).
void gather(const Samples& s, const SampleOrder& order, const Chunk& c, bool vis, bool weight, HostChunk& h);

/// c(i/n) along one axis for pixels 0 ..< size (invert_cpu's cu, cv), uploaded on `stream`.
cuda::DeviceBuffer<double> axis_correction(cuda::PinnedStaging& staging, cudaStream_t stream, const GridPlan& plan,
                                           std::size_t size, std::size_t cells);

/// First-plane groups of a prepared chunk whose samples touch `plane`: p0 ∈ [plane − W + 1, plane].
inline std::pair<int, int> groups_of(const KeyLayout& k, int plane, int support) {
  return {std::max(0, plane - support + 1 - k.p0_base), std::min(k.groups - 1, plane - k.p0_base)};
}

/// Device bytes imaging may use: the options' budget, else GPUCLEAN_TEST_IMAGING_BUDGET, else the
/// free memory less a margin for other users of the device; never more than is free.
std::size_t imaging_budget(const GpuGridderOptions& options);

}  // namespace gpuclean::imaging::gpu

#pragma once
// Clark's minor cycle across the whole GPU (the host side; kernels in cluster_kernels.cu and
// team_kernel.cu). Each cycle: the active set is split into clusters that cannot interact
// (interaction_clusters.hpp states the rule and proves the merge), every cluster runs its own
// Högbom on an SM (large ones on a block, small ones on a warp), and the clusters' records are
// merged by a stable sort into exactly the sequential cycle's components. Then the per-pixel
// flux sums go to the delta image and the model, as the CPU path sums them.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "clean/deconvolver.hpp"
#include "clean/gpu/cluster_kernels.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/event.hpp"

namespace gpuclean::clean::gpu {

struct MinorCycleRequest {
  const float* values = nullptr;          ///< active set in pixel order: residual values
  const std::uint32_t* pixels = nullptr;  ///< and their pixel indices, ascending
  std::uint32_t count = 0;
  double limit = 0.0;
  float gain = 0.1f;
  bool abs_key = true;
  std::uint32_t budget = 0;               ///< most components this cycle
  std::uint32_t* comp_pixels = nullptr;   ///< components written at [0, made)
  float* comp_fluxes = nullptr;
  float* delta = nullptr;                 ///< zero on entry; receives each pixel's summed flux
  float* model = nullptr;                 ///< += the same (null: left alone)
  /// A component's flux is the cycle's gain x value divided by this (a scale's PSF peak).
  float flux_divisor = 1.0f;
  /// --local-rms: one weight per image pixel (device); the values are residual x weight, a
  /// component's flux is gain x value / weight, and it takes flux x weight x patch off each
  /// member (MinorCycleCpu's rule). Null: every weight is 1.
  const float* weights = nullptr;
};

/// A joined run's minor cycle (plane_set.hpp; MinorCycleCpu::run_joined is its reference): the
/// request's values are the members' integrated (weighed) values, its comp_fluxes receive the
/// components' integrated fluxes and delta and model their per-pixel sums; here are the members'
/// values in every plane and where each component's plane fluxes go (sum_last_cycle() makes each
/// plane's delta of them).
struct JoinedMinorRequest {
  int planes = 1;
  bool polarizations = false;
  const float* member_values = nullptr;   ///< request member m, plane p: [m * planes + p]
  const float* patches = nullptr;         ///< patch offset `at`, plane p: [at * planes + p]
  const float* iweights = nullptr;        ///< integration weights
  const float* projection = nullptr;      ///< --fit-spectral-pol (SpectralFit::projection), or null
  const double* log_x = nullptr;          ///< --fit-spectral-log-pol: SpectralFit::log_frequencies
  const double* log_w = nullptr;          ///< and ::weights, on the device
  int log_terms = 0;                      ///< its terms (0: no logarithmic fit)
  /// This cycle's component r, plane p: [p * comp_stride + r], divided by MinorCycleRequest::flux_divisor.
  float* comp_plane_fluxes = nullptr;
  std::size_t comp_stride = 0;
};

struct MinorEngineOptions {
  bool clustered = true;          ///< false: every cycle as one cluster (the sequential order)
  std::size_t initial_pool = 0;   ///< records the pool starts with (0: from the budget)
};

class MinorCycleEngine {
 public:
  /// `patch` (device, (2 half_width + 1)^2) must outlive the engine. `max_members` bounds the
  /// active set and `max_budget` the components of one cycle.
  MinorCycleEngine(cudaStream_t stream, std::size_t width, std::size_t height, const float* patch, int half_width,
                   std::size_t max_members, std::size_t max_budget, MinorEngineOptions options = {});

  /// From the next run() on, subtract `patch` (device, (2 half_width + 1)^2, outliving those
  /// runs): a multiscale run switches to the chosen scale's patch. A patch may be no narrower
  /// than the one the engine was made with (its cell buffers are sized by that one).
  void set_patch(const float* patch, int half_width);

  /// Runs one minor cycle; returns the components made. Synchronizes the stream once (twice
  /// when the record pool must grow).
  std::uint32_t run(const MinorCycleRequest& r);
  /// The same for a joined run.
  std::uint32_t run_joined(const MinorCycleRequest& r, const JoinedMinorRequest& j);
  /// After a run: delta[p] = the sum of the last cycle's `comp_fluxes` (one per component, in
  /// its order) at each pixel p it touched, in component order; model[p] += that (model may be
  /// null). `delta` must be zero elsewhere.
  void sum_last_cycle(const float* comp_fluxes, float* delta, float* model) const;
  /// What sum_last_cycle() reads of the last cycle (device, `made` each, valid until the next
  /// run): a joined run split over GPUs copies them to each GPU, whose sum_per_pixel()
  /// (cluster_kernels.hpp) then sums its planes' fluxes as sum_last_cycle() would.
  struct LastCycle {
    const std::uint32_t* pixel_sorted = nullptr;
    const std::uint32_t* rank_sorted = nullptr;
    std::uint32_t made = 0;
  };
  LastCycle last_cycle() const { return {px_sorted_.data(), rank_sorted_.data(), last_made_}; }

  const MinorCycleStats& stats() const { return stats_; }

  /// Device bytes an engine of this geometry holds at most.
  static std::size_t bytes_needed(std::size_t width, std::size_t height, int half_width, std::size_t max_members,
                                  std::size_t max_budget);

 private:
  void group(const MinorCycleRequest& r, bool clustered);
  void allocate_pool(std::size_t records);
  std::uint32_t run_cycle(const MinorCycleRequest& r, const JoinedMinorRequest* j);
  void launch(const MinorCycleRequest& r, const JoinedMinorRequest* j);

  cudaStream_t stream_;
  std::uint32_t width_, height_;
  const float* patch_;
  int half_width_;
  std::size_t max_members_, max_budget_;
  MinorEngineOptions options_;
  CellGrid grid_;
  std::size_t cells_allocated_ = 0;
  std::size_t pool_ = 0, pool_max_ = 0;
  std::uint32_t last_made_ = 0;
  bool clustered_ = false;  // the last grouping was by cluster (idx_sorted_ maps grouped members back)

  // Cells and members.
  cuda::DeviceBuffer<uint4> box_;
  cuda::DeviceBuffer<std::uint32_t> parent_, end_by_cell_;
  cuda::DeviceBuffer<std::uint32_t> member_cell_, labels_, labels_sorted_, idx_, idx_sorted_, grouped_xy_;
  cuda::DeviceBuffer<float> grouped_values_;
  cuda::DeviceBuffer<ClusterRange> big_, small_;
  cuda::DeviceBuffer<MinorCounters> counters_;
  cuda::DeviceBuffer<unsigned int> order_bins_;  // the budget cutoff's histogram (budget_cutoff.cuh)
  // Records and the merge.
  cuda::DeviceBuffer<std::uint32_t> rec_pixel_, ord_, ord_sorted_;
  cuda::DeviceBuffer<float> rec_flux_;
  cuda::DeviceBuffer<unsigned long long> rec_order_, rec_order_sorted_;
  cuda::DeviceBuffer<std::uint32_t> px_, px_sorted_, rank_, rank_sorted_;
  cuda::DeviceBuffer<std::byte> temp_;
  // Joined runs: the grouped members' keys and plane values, and the records' plane fluxes.
  int planes_ = 0;
  cuda::DeviceBuffer<float> joined_keys_, joined_values_, rec_plane_flux_;
  std::size_t temp_bytes_ = 0;

  cuda::Event team_done_;
  MinorCycleStats stats_;
  double weighted_busy_ = 0.0, weighted_seconds_ = 0.0;
};

}  // namespace gpuclean::clean::gpu

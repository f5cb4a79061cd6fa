#pragma once
// Types shared by the host side of the GPU minor cycle (minor_engine.cpp) and its kernels
// (cluster_kernels.cu, team_kernel.cu). Host-compilable.

#include <cuda_runtime.h>

#include <cstdint>

namespace gpuclean::clean::gpu {

/// Clusters of at most this many members are cleaned by one warp with the members in registers
/// (8 per lane); larger ones by a block: the row team (team_kernel.cu).
inline constexpr std::uint32_t kWarpTeamMax = 256;
/// Threads of a team block, a compile-time choice (the only width built; to time another, change
/// it here): every thread scans its members each step, and the 512- and 256-thread blocks timed
/// in docs/design/gpu-minor-cycle.md did not make the benches faster.
inline constexpr int kRowBlock = 1024;
/// Bins of the budget cutoff's histogram of recorded orders (budget_cutoff.cuh).
inline constexpr std::uint32_t kOrderBins = 1024;

/// Device-side counters of one minor cycle; zeroed before it.
struct MinorCounters {
  unsigned int n_big = 0, n_small = 0;        ///< clusters cleaned by a block / by a warp
  unsigned int next_big = 0, next_small = 0;  ///< work queues of the persistent team kernel
  unsigned int widest = 0;                    ///< members of the largest cluster
  unsigned int longest = 0;                   ///< most components one cluster made
  unsigned int overflow = 0;                  ///< the record pool was too small: run again
  unsigned int peak_key = 0;                  ///< ordered bits of the largest member key (budget_cutoff.cuh)
  unsigned long long records = 0;             ///< components recorded (all clusters)
};

/// A cluster: members [begin, end) of the grouped arrays.
using ClusterRange = uint2;

/// What the team kernel reads and writes.
struct TeamArgs {
  float* values = nullptr;              ///< grouped member values (the block path updates them in place)
  const std::uint32_t* xy = nullptr;    ///< grouped member positions, y << 16 | x, ascending per cluster
  const ClusterRange* big = nullptr;
  const ClusterRange* small = nullptr;
  MinorCounters* counters = nullptr;
  const float* patch = nullptr;         ///< (2 half_width + 1)^2, PSF peak at the centre
  int half_width = 0;
  std::uint32_t width = 0;
  double limit = 0.0;
  float gain = 0.1f;
  const float* weights = nullptr;       ///< --local-rms: per image pixel (MinorCycleRequest::weights)
  bool abs_key = true;
  std::uint32_t budget = 0;             ///< most components per cluster
  std::uint32_t* rec_pixel = nullptr;   ///< the record pool
  float* rec_flux = nullptr;
  unsigned long long* rec_order = nullptr;  ///< running minimum of the packed peaks (the merge key)
  unsigned long long pool_capacity = 0;
  unsigned int* order_bins = nullptr;   ///< the recorded orders' histogram (budget_cutoff.cuh)
  std::uint32_t shared_bytes = 0;       ///< dynamic shared memory of each block
};

}  // namespace gpuclean::clean::gpu

#pragma once
// The joined-plane form of the minor cycle and the major cycle's integration (joined_kernels.cu):
// plane_set.hpp states the rules, MinorCycleCpu::run_joined is the reference they reproduce
// bit for bit. The clusters come from MinorCycleEngine's grouping, as for one plane.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "clean/gpu/minor_types.hpp"

namespace gpuclean::clean::gpu {

struct JoinedTeamArgs {
  const std::uint32_t* xy = nullptr;        ///< grouped member positions (y << 16 | x)
  const float* keys_in = nullptr;           ///< grouped members' integrated (weighed) values
  float* keys = nullptr;                    ///< scratch: one per grouped member
  float* vals = nullptr;                    ///< scratch: plane p's values at [p * stride + member]
  std::uint32_t stride = 0;
  const ClusterRange* big = nullptr;
  const ClusterRange* small = nullptr;
  MinorCounters* counters = nullptr;
  const float* residuals = nullptr;         ///< plane p's residual at [p * plane_pixels]
  std::size_t plane_pixels = 0;
  const float* patches = nullptr;           ///< plane p's beam patch at [p * (2 hw + 1)^2]
  int half_width = 0;
  std::uint32_t width = 0;
  int planes = 1;
  bool polarizations = false;               ///< Join::kPolarizations (else channels)
  const float* iweights = nullptr;          ///< integration weights, one per plane
  const float* projection = nullptr;        ///< --fit-spectral-pol: planes x planes (null: none)
  const float* weights = nullptr;           ///< --local-rms: per image pixel (null: 1)
  double limit = 0.0;
  float gain = 0.1f;
  bool abs_key = true;
  std::uint32_t budget = 0;
  std::uint32_t* rec_pixel = nullptr;
  float* rec_flux = nullptr;                ///< the integrated flux
  float* rec_plane_flux = nullptr;          ///< record r's plane fluxes at [r * planes + p]
  unsigned long long* rec_order = nullptr;
  unsigned long long pool_capacity = 0;
};

/// Runs every cluster's joined minor cycle (a block per cluster, the blocks persistent).
void launch_joined_teams(cudaStream_t s, const JoinedTeamArgs& a);

/// comp[p * comp_stride + r] = rec_plane_flux[order[r] * planes + p] (order null: r), r < made.
void emit_plane_fluxes(cudaStream_t s, const std::uint32_t* order, std::uint32_t made, const float* rec_plane_flux,
                       int planes, float* comp, std::size_t comp_stride);

/// integrated[i] = the planes' integration (NaN where any plane is), masked[i] = mask[i] ?
/// integrated[i] : NaN.
void integrate_planes(cudaStream_t s, const float* residuals, int planes, std::size_t pixels, bool polarizations,
                      const float* iweights, const std::uint8_t* mask, float* integrated, float* masked);

}  // namespace gpuclean::clean::gpu

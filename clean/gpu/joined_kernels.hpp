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
  /// The grouped member g's values in the request's member order: member_of[g] (null: g).
  const std::uint32_t* member_of = nullptr;
  const float* member_values = nullptr;     ///< request member m's plane p at [m * planes + p]
  float* keys = nullptr;                    ///< scratch: one per grouped member
  float* vals = nullptr;                    ///< scratch: grouped member g's plane p at [g * planes + p]
  const ClusterRange* big = nullptr;
  const ClusterRange* small = nullptr;
  MinorCounters* counters = nullptr;
  const float* patches = nullptr;           ///< offset `at` of the beam patch, plane p: [at * planes + p]
  int half_width = 0;
  std::uint32_t width = 0;
  int planes = 1;
  bool polarizations = false;               ///< Join::kPolarizations (else channels)
  const float* iweights = nullptr;          ///< integration weights, one per plane
  const float* projection = nullptr;        ///< --fit-spectral-pol: planes x planes (null: none)
  /// --fit-spectral-log-pol: log10(nu / nu_0) and the weight of each plane, and the terms (0: none).
  const double* log_x = nullptr;
  const double* log_w = nullptr;
  int log_terms = 0;
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
  unsigned int* order_bins = nullptr;       ///< the recorded orders' histogram (budget_cutoff.cuh)
};

/// Runs every cluster's joined minor cycle (a block per cluster, the blocks persistent).
void launch_joined_teams(cudaStream_t s, const JoinedTeamArgs& a);

/// comp[p * comp_stride + r] = rec_plane_flux[order[r] * planes + p] / divisor (order null: r),
/// r < made.
void emit_plane_fluxes(cudaStream_t s, const std::uint32_t* order, std::uint32_t made, const float* rec_plane_flux,
                       int planes, float divisor, float* comp, std::size_t comp_stride);

/// out[m * planes + plane] = image[pixels[m]], m < count: the active set's values in one plane's
/// image.
void gather_plane(cudaStream_t s, const float* image, const std::uint32_t* pixels, std::uint32_t count, int planes,
                  int plane, float* out);

/// The integration of `count` planes (plane-major, `pixels` each) into `acc`, in plane order:
/// channels acc = acc + w_p r_p, polarizations acc = acc + r_p^2 (`first`: acc starts at 0).
/// Several calls over consecutive blocks of planes add up to one call over all of them.
void accumulate_planes(cudaStream_t s, const float* residuals, int count, std::size_t pixels, bool polarizations,
                       const float* iweights, bool first, float* acc);

/// integrated[i] = acc[i] (its root for polarizations), masked[i] = mask[i] ? integrated[i] : NaN;
/// `acc` may be `integrated`. NaN where any plane was NaN (the sums carry it).
void finish_integration(cudaStream_t s, const float* acc, std::size_t pixels, bool polarizations,
                        const std::uint8_t* mask, float* integrated, float* masked);

}  // namespace gpuclean::clean::gpu

#pragma once
// The loops of GPU CLEAN that run many components per launch (kernels in minor_kernels.cu).
// Both subtract with the same rounding as the CPU reference (no fused multiply-add), so that a
// GPU run follows the CPU run component for component.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuclean::clean::gpu {

/// Clark's minor cycles, one block, one launch: Högbom on the active set with the beam patch
/// until the brightest member is at or below `limit` or `budget` components were made.
struct MinorCycleArgs {
  const float* values = nullptr;          ///< active set in pixel order: residual values
  const std::uint32_t* pixels = nullptr;  ///< and their pixel indices, ascending
  std::uint32_t count = 0;
  std::uint32_t width = 0;                ///< image width (< 2^16)
  const float* patch = nullptr;           ///< (2 half_width + 1)^2, PSF peak at the centre, 0 off the PSF
  int half_width = 0;
  double limit = 0.0;
  float gain = 0.1f;
  bool abs_key = true;
  std::uint32_t budget = 0;
  std::uint32_t* comp_pixels = nullptr;   ///< components written at [0, made)
  float* comp_fluxes = nullptr;
  float* delta = nullptr;                 ///< zero on entry; receives each pixel's summed flux
  float* model = nullptr;                 ///< += the same
  std::uint32_t* made = nullptr;          ///< out: components made
  float* scratch_values = nullptr;        ///< count floats: members that do not fit in shared memory
  std::uint32_t* scratch_xy = nullptr;    ///< count entries
  float* scratch_flux = nullptr;          ///< count floats: each member's summed flux
};
void run_minor_cycle(cudaStream_t s, const MinorCycleArgs& a);

/// One Högbom component per launch, with no host round trip: the launch reads the peak found by
/// the previous one (slot step % 3), records the component (index step), subtracts the shifted
/// PSF, and finds the next peak (slot (step + 1) % 3). Once the peak is at or below `limit`, or
/// step reaches `budget`, it sets *stopped and *made = step, and later launches do nothing.
struct HogbomStepArgs {
  float* residual = nullptr;
  float* masked = nullptr;
  const std::uint8_t* mask = nullptr;
  std::size_t width = 0, height = 0;
  const float* psf = nullptr;
  std::size_t psf_width = 0, psf_height = 0, peak_x = 0, peak_y = 0;
  unsigned long long* slots = nullptr;    ///< 3 packed peaks
  double limit = 0.0;
  float gain = 0.1f;
  bool abs_key = true;
  std::uint32_t budget = 0;
  std::uint32_t* comp_pixels = nullptr;
  float* comp_fluxes = nullptr;
  float* model = nullptr;
  std::uint32_t* stopped = nullptr;
  std::uint32_t* made = nullptr;
};
void hogbom_step(cudaStream_t s, const HogbomStepArgs& a, std::uint32_t step);

}  // namespace gpuclean::clean::gpu

#pragma once
// GPU Högbom's step (kernel in minor_kernels.cu); Clark's minor cycle is minor_engine.hpp. It
// subtracts with the same rounding as the CPU reference (no fused multiply-add), so that a GPU
// run follows the CPU run component for component.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuclean::clean::gpu {

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

#pragma once
// Clark CLEAN (Clark 1980) on the CPU: the reference the GPU Clark is checked against.
//
// Once per run:
//   take a beam patch of half-width --beam-patch around the PSF peak, and the largest |PSF|
//   outside it (the largest exterior sidelobe, f).
// Each major cycle:
//   1. peak = brightest cleanable residual pixel; threshold = max(--threshold, auto x sigma);
//      stop on threshold, niter, or a peak that did not fall since the last cycle (divergence).
//   2. limit = max(threshold, f x peak, (1 - mgain) x peak): components from outside the patch
//      cannot change a pixel by more than f x peak, so pixels above the limit are safe to clean
//      with the patch alone.
//   3. active set = the top-k brightest cleanable pixels above the limit (k <= --select-k),
//      through the selection library (ties: lowest index).
//   4. minor cycles: Högbom on the active set with the beam patch only, until the brightest
//      member is at or below the limit, or niter.
//   5. residual -= (this cycle's components) (x) full PSF, by zero-padded FFT convolution.

#include "clean/deconvolver.hpp"

namespace gpuclean::clean {

class ClarkCpu final : public Deconvolver {
 public:
  std::string_view name() const override { return "clark-cpu"; }
  CleanResult run(const CleanProblem& problem, const CleanSettings& settings,
                  const CycleCallback& on_cycle) override;
};

/// The largest |PSF| outside the square patch of half-width `half_width` around the peak.
float largest_exterior_sidelobe(const PreparedPsf& psf, std::size_t half_width);

}  // namespace gpuclean::clean

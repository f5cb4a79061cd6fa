#pragma once
// Clark CLEAN (Clark 1980) on the CPU, over one or several scales: the reference the GPU Clark
// is checked against. Without --multiscale there is one scale, a delta function, and this is
// plain Clark; with it, each major cycle cleans the scale whose biased peak is brightest, as
// WSClean's multiscale CLEAN does (scale_set.hpp says how a scale is cleaned).
//
// Once per run, per scale: its kernel K, the minor cycle's PSF (PSF (x) K (x) K, the PSF itself
// for the delta scale) within a beam patch of half-width --beam-patch + the kernel's width - 1,
// and the largest |value| outside that patch relative to the peak (the exterior sidelobe, f).
// Each major cycle:
//   1. every scale's image (the residual (x) K), its brightest cleanable pixel, and the scale
//      whose peak x bias is largest; threshold = max(--threshold, auto x sigma of the residual);
//      stop on threshold (against the biased peak), niter, or a peak that did not fall since the
//      last cycle (divergence).
//   2. limit = max(threshold / bias, f x peak, (1 - mgain) x peak, (1 - multiscale gain) x peak
//      with --multiscale): components from outside the patch cannot change a pixel by more than
//      f x peak, so pixels above the limit are safe to clean with the patch alone.
//   3. active set = the top-k brightest cleanable pixels of that scale's image above the limit
//      (k <= --select-k), through the selection library (ties: lowest index).
//   4. minor cycles: Högbom on the active set with the scale's patch only, until the brightest
//      member is at or below the limit, or niter.
//   5. model += the components (x) K; residual -= that (x) full PSF, by zero-padded FFT
//      convolution.
// With --local-rms (local_rms.hpp) every search (steps 1, 3, 4) is on the image x the weights
// min_rms / rms, sigma is min_rms, and a component's flux is gain x value / weight. Step 2's
// f x peak then uses the scale image's own (unweighted) peak: the weights are at most 1, so
// the patch's error in a weighed value stays below it.

#include "clean/deconvolver.hpp"

namespace gpuclean::clean {

class ClarkCpu final : public Deconvolver {
 public:
  std::string_view name() const override { return "clark-cpu"; }
  CleanResult run(const CleanProblem& problem, const CleanSettings& settings,
                  const CycleCallback& on_cycle) override;
};

}  // namespace gpuclean::clean

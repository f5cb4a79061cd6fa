#pragma once
// Clark CLEAN (Clark 1980) on the CPU, over one or several scales: the reference the GPU Clark
// is checked against, as the steps of the major-cycle driver (major_cycle.hpp, which owns the
// loop, the thresholds and Clark's limit). Without --multiscale there is one scale, a delta
// function, and this is plain Clark; with it, each major cycle cleans the scale whose biased
// peak is brightest, as WSClean's multiscale CLEAN does (scale_set.hpp says how a scale is
// cleaned).
//
// Once per run, per scale: its kernel K, the minor cycle's PSF (PSF (x) K (x) K, the PSF itself
// for the delta scale) within a beam patch of half-width --beam-patch + the kernel's width - 1,
// and the largest |value| outside that patch relative to the peak (the exterior sidelobe, f).
// Each major cycle, after the driver's choice of scale and limit:
//   - the limit includes f x peak: components from outside the patch cannot change a pixel by
//     more than f x peak, so pixels above the limit are safe to clean with the patch alone;
//   - active set = the top-k brightest cleanable pixels of that scale's image above the limit
//     (k <= --select-k), through the selection library (ties: lowest index);
//   - minor cycles: Högbom on the active set with the scale's patch only, until the brightest
//     member is at or below the limit, or niter;
//   - model += the components (x) K; residual -= that (x) full PSF, by zero-padded FFT
//     convolution.
// With --local-rms (local_rms.hpp) every search is on the image x the weights min_rms / rms,
// sigma is min_rms, and a component's flux is gain x value / weight. The limit's f x peak then
// uses the scale image's own (unweighted) peak: the weights are at most 1, so the patch's error
// in a weighed value stays below it. Joined planes (plane_set.hpp): the peaks are searched on
// the integrated image, the minor and major cycles work on every plane.

#include <memory>

#include "clean/major_cycle_steps.hpp"

namespace gpuclean::clean {

std::unique_ptr<MajorCycleSteps> make_clark_steps_cpu(const CleanProblem& problem, const CleanSettings& settings);

}  // namespace gpuclean::clean

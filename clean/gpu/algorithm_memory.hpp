#pragma once
// What each algorithm's GPU steps hold on the device beyond the run's images, selection
// workspace, scales and spectra (gpu_memory.cpp counts those for every algorithm). The factory's
// table (deconvolver_factory.cpp) names each algorithm's estimator beside its steps.

#include <cstddef>
#include <vector>

#include "clean/clean_settings.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean::gpu {

/// An algorithm's own device bytes for a run of `shape` with `settings` on `scales` (the run's,
/// plan_scales()).
using GpuBytesEstimator = std::size_t (*)(const RunShape& shape, const CleanSettings& settings,
                                          const std::vector<CleanScale>& scales);

/// Clark: the active set and its pixel-sorted copy, their sort, the minor-cycle engine and, for
/// joined planes, every plane's images, spectra and patches (JoinedPlanesGpu).
std::size_t clark_gpu_bytes(const RunShape& shape, const CleanSettings& settings,
                            const std::vector<CleanScale>& scales);

/// Högbom: nothing beyond the run's share; the PSF copy and the few peak slots it keeps are
/// within the run's slack.
std::size_t hogbom_gpu_bytes(const RunShape& shape, const CleanSettings& settings,
                             const std::vector<CleanScale>& scales);

/// The scales the estimate counts for a run of `shape` with `settings`: the run's plan
/// (plan_scales() with scale_beam_pixels(), as prepare_scales() makes it) measured in shape.beam,
/// or in a 1-pixel beam without one (the most automatic scales). The run may drop some of them
/// (drop_uncleanable_scales()), never add one.
std::vector<CleanScale> estimated_scales(const RunShape& shape, const CleanSettings& settings);

/// `algorithm`'s estimator, from the factory's table (deconvolver_factory.cpp).
GpuBytesEstimator gpu_bytes_of(Algorithm algorithm);

}  // namespace gpuclean::clean::gpu

#pragma once
// Högbom CLEAN on the GPU, as the steps of the major-cycle driver (major_cycle.hpp): as the CPU
// steps (hogbom_cpu.hpp), one component per launch (subtract the shifted PSF and find the next
// peak in the same pass), launched in batches with no host round trip between components.

#include <memory>

#include "clean/major_cycle_steps.hpp"

namespace gpuclean::clean::gpu {

class GpuResources;

/// `resources` (the stream, caches and staging of one worker) must outlive the steps.
std::unique_ptr<MajorCycleSteps> make_hogbom_steps_gpu(GpuResources& resources, const CleanProblem& problem,
                                                       const CleanSettings& settings);

}  // namespace gpuclean::clean::gpu

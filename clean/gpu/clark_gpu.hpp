#pragma once
// Clark CLEAN on the GPU: the same algorithm, stopping rules and tie rules as the CPU steps (see
// clark_cpu.hpp), as the steps of the major-cycle driver (major_cycle.hpp), with the residual on
// the device for the whole run. Each major cycle: scale peaks and noise on the device, the
// active set by the selection library (--select), every minor cycle of the cycle in one launch,
// and the subtraction through cuFFT. A few scalars per cycle reach the host.

#include <memory>

#include "clean/major_cycle_steps.hpp"

namespace gpuclean::clean::gpu {

class GpuResources;

/// `resources` (the stream, caches and staging of one worker) must outlive the steps.
std::unique_ptr<MajorCycleSteps> make_clark_steps_gpu(GpuResources& resources, const CleanProblem& problem,
                                                      const CleanSettings& settings);

}  // namespace gpuclean::clean::gpu

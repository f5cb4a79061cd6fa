#pragma once
// A GPU deconvolver: one algorithm's GPU steps run by the major-cycle driver, with the worker's
// GPU resources (stream, cuFFT plans, caches, pinned staging) made on the first run, on the
// device current then, and kept for the next (batch mode).

#include <memory>
#include <string>

#include "clean/major_cycle_steps.hpp"

namespace gpuclean::clean::gpu {

class GpuResources;

/// Makes an algorithm's GPU steps for one run on `resources`.
using GpuStepsMaker = std::unique_ptr<MajorCycleSteps> (*)(GpuResources&, const CleanProblem&, const CleanSettings&);

std::unique_ptr<Deconvolver> make_gpu_deconvolver(std::string name, GpuStepsMaker make);

}  // namespace gpuclean::clean::gpu

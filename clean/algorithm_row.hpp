#pragma once
// One row of the algorithm table (deconvolver_factory.cpp): an algorithm's steps on each device
// and the device memory its GPU steps hold. The built-in algorithms are rows of the table; a row
// made elsewhere (a test's toy algorithm) runs through the same deconvolvers without being
// registered.

#include <memory>
#include <string>

#include "clean/deconvolver.hpp"
#include "clean/gpu/algorithm_memory.hpp"
#include "clean/gpu/gpu_deconvolver.hpp"
#include "clean/major_cycle_steps.hpp"

namespace gpuclean::clean {

struct AlgorithmRow {
  std::string name;                               ///< the deconvolvers are "<name>-cpu", "<name>-gpu"
  CpuStepsMaker cpu = nullptr;
  gpu::GpuStepsMaker gpu = nullptr;               ///< null: CPU only
  gpu::GpuBytesEstimator gpu_bytes = nullptr;     ///< with `gpu`
};

/// The table's row for a built-in algorithm.
const AlgorithmRow& algorithm_row(Algorithm algorithm);

/// A deconvolver for `row` on a resolved device (kCpu or kGpu). Throws InvalidSettings when the
/// row has no steps for the device or this build has no CUDA.
std::unique_ptr<Deconvolver> make_deconvolver(const AlgorithmRow& row, Device device);

}  // namespace gpuclean::clean

#include <chrono>

#include "clean/clark_cpu.hpp"
#include "clean/errors.hpp"
#include "clean/hogbom_cpu.hpp"
#include "clean/major_cycle.hpp"

#ifdef GPUCLEAN_HAVE_CUDA
#include "clean/gpu/algorithm_memory.hpp"
#include "clean/gpu/clark_gpu.hpp"
#include "clean/gpu/gpu_deconvolver.hpp"
#include "clean/gpu/hogbom_gpu.hpp"
#endif

namespace gpuclean::clean {
namespace {

// Every algorithm's steps on each device, and the device memory its GPU steps hold: the one
// place a new algorithm is listed.
struct AlgorithmSteps {
  CpuStepsMaker cpu;
#ifdef GPUCLEAN_HAVE_CUDA
  gpu::GpuStepsMaker gpu;
  gpu::GpuBytesEstimator gpu_bytes;
#endif
};

AlgorithmSteps steps_of(Algorithm algorithm) {
  switch (algorithm) {  // exhaustive: a new Algorithm is a compiler warning here
#ifdef GPUCLEAN_HAVE_CUDA
    case Algorithm::kClark: return {make_clark_steps_cpu, gpu::make_clark_steps_gpu, gpu::clark_gpu_bytes};
    case Algorithm::kHogbom: return {make_hogbom_steps_cpu, gpu::make_hogbom_steps_gpu, gpu::hogbom_gpu_bytes};
#else
    case Algorithm::kClark: return {make_clark_steps_cpu};
    case Algorithm::kHogbom: return {make_hogbom_steps_cpu};
#endif
  }
  throw InvalidSettings("unknown algorithm");
}

class CpuDeconvolver final : public Deconvolver {
 public:
  CpuDeconvolver(Algorithm algorithm, CpuStepsMaker make)
      : name_(std::string(to_string(algorithm)) + "-cpu"), make_(make) {}
  std::string_view name() const override { return name_; }
  std::unique_ptr<MajorCycleSteps> steps(const CleanProblem& problem, const CleanSettings& settings) override {
    check_joinable(problem, settings);
    return make_(problem, settings);
  }

 private:
  std::string name_;
  CpuStepsMaker make_;
};

}  // namespace

CleanResult Deconvolver::run(const CleanProblem& problem, const CleanSettings& settings, const CycleCallback& on_cycle) {
  const auto s = steps(problem, settings);
  return run_major_cycles(*s, problem, settings, on_cycle);
}

#ifdef GPUCLEAN_HAVE_CUDA
gpu::GpuBytesEstimator gpu::gpu_bytes_of(Algorithm algorithm) { return steps_of(algorithm).gpu_bytes; }
#endif

std::unique_ptr<Deconvolver> make_deconvolver(Algorithm algorithm, Device device) {
  const AlgorithmSteps steps = steps_of(algorithm);
  if (device == Device::kGpu) {
#ifdef GPUCLEAN_HAVE_CUDA
    return gpu::make_gpu_deconvolver(std::string(to_string(algorithm)) + "-gpu", steps.gpu);
#else
    throw InvalidSettings("this gpuclean was built without CUDA; use --device cpu (or auto), or rebuild with nvcc.");
#endif
  }
  return std::make_unique<CpuDeconvolver>(algorithm, steps.cpu);
}

}  // namespace gpuclean::clean

#include "clean/algorithm_row.hpp"
#include "clean/clark_cpu.hpp"
#include "clean/errors.hpp"
#include "clean/hogbom_cpu.hpp"
#include "clean/major_cycle.hpp"

#ifdef GPUCLEAN_HAVE_CUDA
#include "clean/gpu/clark_gpu.hpp"
#include "clean/gpu/hogbom_gpu.hpp"
#endif

namespace gpuclean::clean {
namespace {

#ifdef GPUCLEAN_HAVE_CUDA
#define GPUCLEAN_GPU_STEPS(steps, bytes) steps, bytes
#else
#define GPUCLEAN_GPU_STEPS(steps, bytes) nullptr, nullptr
#endif

class CpuDeconvolver final : public Deconvolver {
 public:
  CpuDeconvolver(const std::string& name, CpuStepsMaker make) : name_(name + "-cpu"), make_(make) {}
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

// Every algorithm's steps on each device, and the device memory its GPU steps hold: the one
// place a new algorithm is listed.
const AlgorithmRow& algorithm_row(Algorithm algorithm) {
  static const AlgorithmRow clark{std::string(to_string(Algorithm::kClark)), make_clark_steps_cpu,
                                  GPUCLEAN_GPU_STEPS(gpu::make_clark_steps_gpu, gpu::clark_gpu_bytes)};
  static const AlgorithmRow hogbom{std::string(to_string(Algorithm::kHogbom)), make_hogbom_steps_cpu,
                                   GPUCLEAN_GPU_STEPS(gpu::make_hogbom_steps_gpu, gpu::hogbom_gpu_bytes)};
  switch (algorithm) {  // exhaustive: a new Algorithm is a compiler warning here
    case Algorithm::kClark: return clark;
    case Algorithm::kHogbom: return hogbom;
  }
  throw InvalidSettings("unknown algorithm");
}

CleanResult Deconvolver::run(const CleanProblem& problem, const CleanSettings& settings, const CycleCallback& on_cycle) {
  const auto s = steps(problem, settings);
  return run_major_cycles(*s, problem, settings, on_cycle);
}

#ifdef GPUCLEAN_HAVE_CUDA
gpu::GpuBytesEstimator gpu::gpu_bytes_of(Algorithm algorithm) { return algorithm_row(algorithm).gpu_bytes; }
#endif

std::unique_ptr<Deconvolver> make_deconvolver(const AlgorithmRow& row, Device device) {
  if (device == Device::kGpu) {
#ifdef GPUCLEAN_HAVE_CUDA
    if (!row.gpu) throw InvalidSettings(row.name + " has no GPU steps; use --device cpu.");
    return gpu::make_gpu_deconvolver(row.name + "-gpu", row.gpu);
#else
    throw InvalidSettings("this gpuclean was built without CUDA; use --device cpu (or auto), or rebuild with nvcc.");
#endif
  }
  if (!row.cpu) throw InvalidSettings(row.name + " has no CPU steps; use --device gpu.");
  return std::make_unique<CpuDeconvolver>(row.name, row.cpu);
}

std::unique_ptr<Deconvolver> make_deconvolver(Algorithm algorithm, Device device) {
  return make_deconvolver(algorithm_row(algorithm), device);
}

}  // namespace gpuclean::clean

#include "clean/clark_cpu.hpp"
#include "clean/errors.hpp"
#include "clean/hogbom_cpu.hpp"

#ifdef GPUCLEAN_HAVE_CUDA
#include "clean/gpu/clark_gpu.hpp"
#include "clean/gpu/hogbom_gpu.hpp"
#endif

namespace gpuclean::clean {

std::unique_ptr<Deconvolver> make_deconvolver(Algorithm algorithm, Device device) {
  if (device == Device::kGpu) {
#ifdef GPUCLEAN_HAVE_CUDA
    if (algorithm == Algorithm::kClark) return std::make_unique<ClarkGpu>();
    return std::make_unique<HogbomGpu>();
#else
    throw InvalidSettings("this gpuclean was built without CUDA; use --device cpu (or auto), or rebuild with nvcc.");
#endif
  }
  switch (algorithm) {
    case Algorithm::kClark: return std::make_unique<ClarkCpu>();
    case Algorithm::kHogbom: return std::make_unique<HogbomCpu>();
  }
  throw InvalidSettings("unknown algorithm");
}

}  // namespace gpuclean::clean

#include "clean/clark_cpu.hpp"
#include "clean/errors.hpp"
#include "clean/hogbom_cpu.hpp"

namespace gpuclean::clean {

std::unique_ptr<Deconvolver> make_deconvolver(Algorithm algorithm, Device device) {
  if (device == Device::kGpu) {
    throw InvalidSettings(
        "GPU CLEAN is not part of this version of gpuclean yet; use --device cpu (or auto).");
  }
  switch (algorithm) {
    case Algorithm::kClark: return std::make_unique<ClarkCpu>();
    case Algorithm::kHogbom: return std::make_unique<HogbomCpu>();
  }
  throw InvalidSettings("unknown algorithm");
}

}  // namespace gpuclean::clean

#pragma once
// Högbom CLEAN on the GPU: as HogbomCpu, one component per launch (subtract the shifted PSF and
// find the next peak in the same pass), launched in batches with no host round trip between
// components.

#include <memory>

#include "clean/deconvolver.hpp"

namespace gpuclean::clean::gpu {
class GpuResources;
}

namespace gpuclean::clean {

class HogbomGpu final : public Deconvolver {
 public:
  HogbomGpu();
  ~HogbomGpu() override;
  std::string_view name() const override { return "hogbom-gpu"; }
  CleanResult run(const CleanProblem& problem, const CleanSettings& settings,
                  const CycleCallback& on_cycle) override;

 private:
  // Made on the first run, on the device current then; kept for the next run (batch mode).
  std::unique_ptr<gpu::GpuResources> resources_;
};

}  // namespace gpuclean::clean

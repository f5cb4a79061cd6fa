#pragma once
// Högbom CLEAN on the GPU: as HogbomCpu, one component per launch (subtract the shifted PSF and
// find the next peak in the same pass), launched in batches with no host round trip between
// components.

#include "clean/deconvolver.hpp"

namespace gpuclean::clean {

class HogbomGpu final : public Deconvolver {
 public:
  std::string_view name() const override { return "hogbom-gpu"; }
  CleanResult run(const CleanProblem& problem, const CleanSettings& settings,
                  const CycleCallback& on_cycle) override;
};

}  // namespace gpuclean::clean

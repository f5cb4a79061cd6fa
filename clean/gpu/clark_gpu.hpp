#pragma once
// Clark CLEAN on the GPU: the same algorithm, stopping rules and tie rules as ClarkCpu (see
// clark_cpu.hpp), with the residual on the device for the whole run. Each major cycle: peak and
// noise on the device, the active set by the selection library (--select), every minor cycle of
// the cycle in one launch, and the subtraction through cuFFT. A few scalars per cycle reach the
// host.

#include <memory>

#include "clean/deconvolver.hpp"

namespace gpuclean::clean::gpu {
class GpuResources;
}

namespace gpuclean::clean {

class ClarkGpu final : public Deconvolver {
 public:
  ClarkGpu();
  ~ClarkGpu() override;
  std::string_view name() const override { return "clark-gpu"; }
  CleanResult run(const CleanProblem& problem, const CleanSettings& settings,
                  const CycleCallback& on_cycle) override;

 private:
  // Made on the first run, on the device current then; kept for the next run (batch mode).
  std::unique_ptr<gpu::GpuResources> resources_;
};

}  // namespace gpuclean::clean

#pragma once
// Högbom CLEAN (Högbom 1974) on the CPU: the reference the GPU Högbom is checked against.
//
//   repeat until a stopping rule fires:
//     find the peak of the residual over cleanable pixels (ties: lowest index)
//     add gain x peak to the model there
//     subtract gain x peak x PSF (shifted to the peak, full extent) from the residual
//
// With --mgain < 1 the loop is cut into "major cycles" that end once the peak has fallen by that
// fraction; the stopping rules (and the per-cycle log line) run between them.

#include "clean/deconvolver.hpp"

namespace gpuclean::clean {

class HogbomCpu final : public Deconvolver {
 public:
  std::string_view name() const override { return "hogbom-cpu"; }
  CleanResult run(const CleanProblem& problem, const CleanSettings& settings,
                  const CycleCallback& on_cycle) override;
};

/// residual -= flux x PSF shifted so that its peak lands on (x, y); pixels off the PSF are
/// untouched. Shared by Högbom and the tests.
void subtract_shifted_psf(HostImage& residual, const PreparedPsf& psf, std::size_t x, std::size_t y,
                          float flux);

}  // namespace gpuclean::clean

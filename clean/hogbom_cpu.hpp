#pragma once
// Högbom CLEAN (Högbom 1974) on the CPU, as the steps of the major-cycle driver
// (major_cycle.hpp): the reference the GPU Högbom is checked against.
//
//   repeat until a stopping rule fires:
//     find the peak of the residual over cleanable pixels (ties: lowest index)
//     add gain x peak to the model there
//     subtract gain x peak x PSF (shifted to the peak, full extent) from the residual
//
// With --mgain < 1 the loop is cut into "major cycles" that end once the peak has fallen by that
// fraction; the driver's stopping rules, thresholds and --auto-mask phases run between them.
// One delta scale with no sidelobe term: the whole PSF is subtracted at every step, so the
// driver's Clark limit is max(threshold, (1 - mgain) x peak). --local-rms and joined planes
// are Clark's (clean_settings.cpp, check_joinable say why).

#include <memory>

#include "clean/major_cycle_steps.hpp"

namespace gpuclean::clean {

std::unique_ptr<MajorCycleSteps> make_hogbom_steps_cpu(const CleanProblem& problem, const CleanSettings& settings);

/// residual -= flux x PSF shifted so that its peak lands on (x, y); pixels off the PSF are
/// untouched. Shared by Högbom and the tests.
void subtract_shifted_psf(HostImage& residual, const PreparedPsf& psf, std::size_t x, std::size_t y,
                          float flux);

}  // namespace gpuclean::clean

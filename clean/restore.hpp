#pragma once
#include "clean/beam.hpp"
#include "clean/deconvolver.hpp"
#include "clean/host_image.hpp"

namespace gpuclean::clean {

/// restored = model (x) beam + residual, in Jy/beam (the beam has a peak of 1). Pixels that are
/// NaN in the residual stay NaN.
HostImage restore_cpu(const HostImage& model, const HostImage& residual, const PixelGaussian& beam,
                      int threads);

/// When the problem gives a restoring beam: result.restored from result's model and residual,
/// timed as seconds.restore.
void restore_if_asked(const CleanProblem& problem, int threads, CleanResult& result);

}  // namespace gpuclean::clean

#pragma once
// `gpuclean image [options] a.ms [b.ms ...]`: a dirty image (and PSF) from MeasurementSets, as
// `wsclean -niter 0` makes them. Dispatched by main.cpp before CLI11 (single-dash options).
#include <string>
#include <vector>

namespace gpuclean::app {

/// `args`: the words after "image". Returns the exit code; failures throw (main's classify()).
/// Without casacore it throws clean::InvalidSettings "built without casacore" (exit 2).
int run_image(const std::vector<std::string>& args, const std::string& command_line);

}  // namespace gpuclean::app

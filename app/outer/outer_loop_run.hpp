#pragma once
// gpuclean inside another program's major cycle (WSClean's -python-deconvolution): the options
// (GPUCLEAN_OPTIONS, the single command's syntax and parser) and the start of a session.

#include <memory>
#include <string>
#include <vector>

#include "app/log.hpp"
#include "clean/outer_loop.hpp"

namespace gpuclean::app {

struct OuterLoopOptions {
  clean::CleanSettings settings;  ///< validated; the device as asked (auto, cpu, gpu)
  std::string fits_mask;          ///< --fits-mask, read when the session starts
  Verbosity verbosity = Verbosity::kNormal;
};

/// Parses the single command's options as the command line does and checks them for a run
/// inside WSClean: the settings validated, and nothing that names an input or an output (WSClean
/// images and writes). Throws CLI11's ParseError or clean::InvalidSettings with the message to show.
OuterLoopOptions parse_outer_loop_options(const std::vector<std::string>& args);

/// Starts a session on the first round's residual: reads --fits-mask, and resolves the device
/// (auto: the GPU when one is usable and the run fits in its memory, else the CPU, with a warning).
std::unique_ptr<clean::OuterLoopSession> start_outer_loop(const OuterLoopOptions& options, clean::OuterLoopInput input,
                                                          const std::vector<const float*>& first, const Log& log);

}  // namespace gpuclean::app

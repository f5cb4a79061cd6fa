#pragma once
// The single command on a spectral cube or a WSClean channel set: every plane its own CLEAN
// (several planes at once on the GPU, each worker on its own stream), or the planes joined
// (--join-channels, --join-polarizations: clean/plane_set.hpp), then the outputs in the input's
// layout (cube_output.hpp).

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cube/cube_input.hpp"
#include "app/run_options.hpp"
#include "clean/deconvolver.hpp"

namespace gpuclean::app {

/// What one CLEAN of the run worked on: one plane, or the planes it joined (indices into
/// CubeInput::planes).
struct CleanGroup {
  std::vector<std::size_t> planes;
  bool joined() const { return planes.size() > 1; }
};

/// The GPUs a cube's plane groups spread over: `c.gpus` when given, else the visible devices,
/// at most `c.max_gpus` of them (0: all). Empty without a usable GPU.
std::vector<int> cube_gpus(const CubeOptions& c);


/// Checks the cube options against each other and the settings (before any work).
void validate_cube_options(const RunOptions& o);

/// Runs the whole command and returns its JSON summary (cube_output.hpp); throws on any failure
/// (main maps exceptions to exit codes).
nlohmann::json run_cube(const RunOptions& o);

/// Every output of the command (a WSClean set's names need its files, found here).
std::vector<std::string> cube_outputs(const RunOptions& o);

}  // namespace gpuclean::app

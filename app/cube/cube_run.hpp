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

/// The groups the options make of the input's planes. Throws InvalidSettings when a join needs
/// more planes than there are.
std::vector<CleanGroup> clean_groups(const CubeInput& in, const clean::CleanSettings& o);

/// Runs `count` CLEANs on `workers` threads (the caller's among them), each thread with its own
/// deconvolver (on the GPU: its own stream and workspaces); `run(g, deconvolver)` does number g.
/// The first failure stops the rest and is rethrown. With `pool`, worker w uses (*pool)[w]
/// (made when missing), so that a later call finds its plans, pools and streams warm. With
/// `gpus` (on the GPU), worker w runs on gpus[w % gpus.size()], its deconvolver made there;
/// without, every worker on the caller's current device. The caller's current device is its
/// own again on return.
using DeconvolverPool = std::vector<std::unique_ptr<clean::Deconvolver>>;
void for_each_clean(std::size_t count, std::size_t workers, clean::Algorithm algorithm, clean::Device device,
                    const std::function<void(std::size_t, clean::Deconvolver&)>& run, DeconvolverPool* pool = nullptr,
                    const std::vector<int>& gpus = {});

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

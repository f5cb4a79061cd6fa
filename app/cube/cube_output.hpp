#pragma once
// The outputs of a cube run, all or none (io::StagedOutputs):
//   cube input:  -o (restored), --model, --residual as cubes in the input's layout, each plane
//                restored with its own beam: BMAJ/BMIN/BPA when all planes share one, else a
//                CASA BEAMS table;
//   WSClean set: OUT-0000-image.fits, -model, -residual per channel (OUT-0000-I-image.fits ...
//                with polarisations) and OUT-MFS-image/-model/-residual.fits: the channels'
//                weighted mean (cube_input.hpp's weights), the MFS image restored with the beam
//                fitted to the weighted mean PSF, as WSClean does;
//   and --components (CSV, a row per component and plane), --save-source-list, --json.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cube/cube_input.hpp"
#include "app/cube/cube_run.hpp"
#include "app/run_options.hpp"
#include "clean/deconvolver.hpp"
#include "clean/select_comparison_types.hpp"

namespace gpuclean::app {

struct CubeRunResult {
  std::vector<CleanGroup> groups;
  std::vector<clean::CleanResult> results;  ///< one per group
  std::string device;
  std::vector<int> group_gpu;  ///< the GPU that cleaned each group (empty on the CPU)
  /// --compare-select (one group): each major cycle's comparison.
  std::vector<clean::SelectCycleComparison> select_comparison;
  double seconds_read = 0, seconds_clean = 0;
};

/// Every file the run writes (the checks before any work, and the writer, use the same list).
/// `set`: the WSClean input's files (null for a cube).
std::vector<std::string> cube_output_paths(const RunOptions& o, const io::WscleanChannelSet* set);

/// The plane p's images of the run.
struct PlaneView {
  const clean::HostImage *model, *residual, *restored;
  const clean::CleanResult* result;  ///< its group's
};
std::vector<PlaneView> plane_views(const CubeInput& in, const CubeRunResult& run);

/// Writes the outputs; returns the JSON summary (also written with --json).
nlohmann::json write_cube_outputs(const RunOptions& o, const CubeInput& in, const CubeRunResult& run);

/// WSClean's source-list text for the joined groups' Stokes I components: one source per pixel
/// and scale (POINT for scale 0, GAUSSIAN of the scale's FWHM above it, as radler writes them),
/// its summed channel fluxes fitted as --fit-spectral-pol / -log-pol asks, else a flat spectrum
/// of their weighted mean.
std::string wsclean_source_list(const RunOptions& o, const CubeInput& in, const CubeRunResult& run);

}  // namespace gpuclean::app

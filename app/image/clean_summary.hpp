#pragma once
// The JSON summary of `gpuclean image -niter N` (-json FILE), in the common schema
// (docs/summary-json.md, front_end "image"): the envelope, the settings, one run per group of
// output channels cleaned together (one with -join-channels, else one per channel; each with its
// own loop's counts in `loop`) whose planes are its output channels, and the Cotton-Schwab loop's
// own blocks: major_cycles (one entry per major cycle of every run, its run named: components,
// peaks, threshold, σ, seconds of deconvolution, prediction and re-imaging), totals (over the
// runs), outputs, model_data and seconds.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/image/image_args.hpp"
#include "app/image/major_cycles.hpp"
#include "app/summary/summary_json.hpp"
#include "clean/deconvolver.hpp"

namespace gpuclean::app {

/// One output channel's plane of the summary.
struct ImagePlaneSummary {
  PlaneSummary plane;  ///< index, run 0, RMS, model flux, restored peak, beam
  double frequency_hz = 0, weight = 0;
};

/// The front end's stages [s].
struct ImageCleanSeconds {
  double first_inversion = 0;  ///< read, weights, dirty images and PSFs
  double loop = 0;             ///< run_major_cycles
  double restore = 0;          ///< restored and MFS images
  double write = 0;            ///< FITS files and source list, staged
  double model_data = 0;       ///< MODEL_DATA: waiting for its prediction (made while restoring) and writing it
};

/// One group of output channels cleaned together (clean_groups.hpp): its session and its loop.
struct ImageCleanRun {
  std::vector<std::size_t> channels;  ///< its output channels (planes), in order
  MajorCycleReport report;
  clean::CleanResult result;          ///< the session's run: components and ledger (no images)
  clean::CleanSettings settings;      ///< the session's settings (its beam for scales and local RMS)
  /// -deconvolution-channels: the cleaned planes' frequencies and weights, whose fluxes the
  /// components carry (empty: the output channels were cleaned).
  std::vector<double> plane_frequencies_hz, plane_weights;
};

struct ImageCleanRecord {
  const ImageOptions* options = nullptr;
  std::string command_line;
  const std::vector<ImageCleanRun>* runs = nullptr;  ///< in channel order
  std::vector<ImagePlaneSummary> planes;
  std::vector<std::string> outputs;  ///< every file written (the summary's own included)
  bool model_data = false;           ///< MODEL_DATA written
  std::size_t model_data_rows = 0;
  ImageCleanSeconds seconds;
};

nlohmann::json image_summary_json(const ImageCleanRecord& record);

}  // namespace gpuclean::app

#pragma once
// The single-observation command: what to read, how to clean, what to write.

#include <optional>
#include <string>
#include <vector>

#include "clean/clean_settings.hpp"

namespace gpuclean::app {

/// kWarnings: warnings only (batch mode prints its own progress instead of each run's log).
enum class Verbosity { kQuiet, kWarnings, kNormal, kVerbose };

/// Spectral cubes and WSClean channel sets (app/cube_run.hpp).
struct CubeOptions {
  /// The DIRTY argument is WSClean's NAME: NAME-0000-dirty.fits ... with their -psf twins.
  bool wsclean_channels = false;
  // --join-channels, --join-polarizations and the spectral fits are CleanSettings'.
  std::string source_list;          ///< --save-source-list FILE (WSClean's text format)
  /// --parallel-planes: plane groups cleaned at once on each GPU (0: from memory).
  std::size_t parallel_planes = 0;
  /// --max-gpus: the visible GPUs the plane groups spread over, at most this many (0: all).
  std::size_t max_gpus = 0;
  /// The GPUs to use instead, in order (batch: its worker's). A device given twice gets two
  /// shares of workers on its one memory: the tests run the spreading on one GPU so.
  std::vector<int> gpus;
};

struct RunOptions {
  std::string dirty, psf, output;
  std::string model, residual, components, json, fits_mask;
  std::string quicklook;                  ///< PNG preview of the restored image
  std::string noise_map;                  ///< --local-rms's noise map (FITS)
  double quicklook_low = 0.5, quicklook_high = 99.5;  ///< its scaling percentiles
  /// --compare-select: the per-cycle timings go to PREFIX.csv, .json and .png (default: the
  /// restored image's name without .fits, plus "-select").
  std::string compare_prefix;
  bool overwrite = false;
  /// --psf-unchecked: use a PSF whose largest value is not its largest magnitude, or lies far
  /// from the centre (clean::PsfChecks), with a warning instead of refusing it.
  bool psf_unchecked = false;
  /// --auto-threshold was given (here or in batch's defaults): with it, an explicit --threshold
  /// leaves the automatic threshold on (clean::apply_explicit_threshold).
  bool auto_threshold_given = false;
  Verbosity verbosity = Verbosity::kNormal;
  clean::CleanSettings settings;
  CubeOptions cube;
  std::string command_line;  ///< recorded in HISTORY
};

/// Runs one deconvolution; throws on any failure (main maps exceptions to exit codes).
void run_clean(const RunOptions& options);

}  // namespace gpuclean::app

#pragma once
// The single-observation command: what to read, how to clean, what to write.

#include <optional>
#include <string>

#include "clean/clean_settings.hpp"

namespace gpuclean::app {

/// kWarnings: warnings only (batch mode prints its own progress instead of each run's log).
enum class Verbosity { kQuiet, kWarnings, kNormal, kVerbose };

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
  std::string command_line;  ///< recorded in HISTORY
};

/// Runs one deconvolution; throws on any failure (main maps exceptions to exit codes).
void run_clean(const RunOptions& options);

}  // namespace gpuclean::app

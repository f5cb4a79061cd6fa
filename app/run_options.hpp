#pragma once
// The single-observation command: what to read, how to clean, what to write.

#include <optional>
#include <string>

#include "clean/clean_settings.hpp"

namespace gpuclean::app {

enum class Verbosity { kQuiet, kNormal, kVerbose };

struct RunOptions {
  std::string dirty, psf, output;
  std::string model, residual, components, json, fits_mask;
  bool overwrite = false;
  Verbosity verbosity = Verbosity::kNormal;
  clean::CleanSettings settings;
  std::string command_line;  ///< recorded in HISTORY
};

/// Runs one deconvolution; throws on any failure (main maps exceptions to exit codes).
void run_clean(const RunOptions& options);

}  // namespace gpuclean::app

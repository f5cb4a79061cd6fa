#pragma once
// The one JSON summary schema ("gpuclean-summary", docs/summary-json.md) that every front end
// writes: the single command (and gpuclean.deconvolve), cubes and WSClean channel sets, and
// batch. Each block is written by one function here, so that a key means the same everywhere.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clean/beam.hpp"
#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"

namespace gpuclean::app {

inline constexpr const char* kSummarySchema = "gpuclean-summary";
/// 1 was the single command's unversioned summary; 2 is the common schema. Raise it when a key
/// changes meaning or goes away (adding keys keeps it).
inline constexpr int kSummarySchemaVersion = 2;

/// The keys a summary opens with: schema, schema_version, front_end ("clean", "cube",
/// "batch"), gpuclean_version, command (the command line).
nlohmann::json summary_envelope(const std::string& front_end, const std::string& command);

/// The cleaning settings, the same keys for every front end.
nlohmann::json settings_json(const clean::CleanSettings& settings);

/// One CLEAN run: `planes`, its planes' indices in the summary's "planes"; `gpu`, the GPU that
/// ran it where the front end knows it.
nlohmann::json run_json(const clean::CleanResult& result, const clean::CleanSettings& settings,
                        const std::vector<std::size_t>& planes, std::optional<int> gpu);

/// One image plane's outcome (index: its position in "planes"; run: its run's in "runs").
struct PlaneSummary {
  std::size_t index = 0, run = 0;
  double rms_residual = 0, model_flux = 0, restored_peak = 0;
  clean::PixelGaussian beam;               ///< the restoring beam in pixels
  std::optional<clean::SkyBeam> sky_beam;  ///< empty without a celestial WCS
  bool beam_fitted = true;                 ///< false: --beam-shape gave it
};
nlohmann::json plane_json(const PlaneSummary& plane);

/// The front end's own stages [s]; total is their sum. `restore`: only a front end that restores
/// outside the CLEAN run (the single command) has that stage.
nlohmann::json seconds_json(double read, double clean, std::optional<double> restore, double write);

}  // namespace gpuclean::app

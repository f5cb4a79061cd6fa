#pragma once
// What became of one observation of a batch: the report's entry and the progress line's source.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuclean::app {

enum class OutcomeStatus { kDone, kFailed, kSkipped };
const char* to_string(OutcomeStatus s);

struct ObservationOutcome {
  std::size_t index = 0;  ///< position in the manifest (0-based)
  std::string name;
  OutcomeStatus status = OutcomeStatus::kFailed;
  std::string reason;     ///< failed: the one-line error; skipped: why
  int exit_code = 0;      ///< failed: what the single command would have exited with
  std::string dirty, psf;
  std::vector<std::string> outputs;
  std::string device;     ///< "gpu 0", "cpu"
  std::string mode;       ///< a channel set's: "channels", "polarizations" or "independent"; else ""
  std::size_t width = 0, height = 0;
  double read_seconds = 0, clean_seconds = 0, restore_seconds = 0, write_seconds = 0;
  double seconds = 0;     ///< from the start of its read to the end of its write
  /// Inside clean_seconds: the major-cycle stages as CLEAN timed them (0 for a channel set).
  double setup_seconds = 0, select_seconds = 0, minor_seconds = 0, convolve_seconds = 0, download_seconds = 0;
  std::size_t iterations = 0, major_cycles = 0;
  std::string stop_reason;
  double rms_residual = 0, model_flux = 0, peak_residual = 0;
  /// Done: its own summary (docs/summary-json.md; front_end "clean" or "cube"), whose runs and
  /// planes the report's entry carries.
  nlohmann::json summary;
};

}  // namespace gpuclean::app

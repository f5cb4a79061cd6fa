#pragma once
// A MeasurementSet's note that a run has decided to write its MODEL_DATA: a hidden file beside
// the MS, `.<MS name>.gpuclean-commit`, that names the run's stage folder. It is written before
// the run's commit record and removed once MODEL_DATA is written, so a run that later takes the
// MS finds a stopped run's unfinished commit there and completes it (io/stage_folder.hpp) before
// it reads or writes anything. Nothing inside the MS changes.

#include <optional>
#include <string>

namespace gpuclean::io {

/// The pointer's path for `ms`.
std::string stage_pointer_path(const std::string& ms);

/// Writes the pointer to `stage` (absolute) and syncs it and its folder. Throws FitsError(kOutput).
void write_stage_pointer(const std::string& ms, const std::string& stage);

/// The stage the pointer names, if there is one.
std::optional<std::string> read_stage_pointer(const std::string& ms);

void remove_stage_pointer(const std::string& ms);

}  // namespace gpuclean::io

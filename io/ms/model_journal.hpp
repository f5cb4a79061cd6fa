#pragma once
// MODEL_DATA's redo journal. A run that updates MODEL_DATA first writes, into its stage folder,
// the values it will put into each MS (the selection, the rows, the predictions); the MS itself is
// not touched until the run has decided to commit (io/staged_outputs.hpp). The journal is then
// applied; a run stopped while applying it leaves the journal and its commit record, and the
// next run that takes the MS (or stages into the same folder) applies it again from the start.
// Applying is idempotent, so the MS ends with the new model and the images in place, never half.

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/ms/ms_selection.hpp"

namespace gpuclean::io::ms {

/// Writes the journal `path`: MODEL_DATA (selection.model_column) of `selection.path` gets
/// `values` ([row][channel], as ModelDataWriter::write takes them) in `rows`, by the selection's
/// Stokes rule. `reset`: whether the column starts from zeros when applied (default: when it is
/// absent or unusable now; a later polarization's journal of the same run gives false). Throws
/// MsError kIo when it cannot be written.
void write_model_journal(const std::string& path, const MsSelection& selection, const std::vector<std::uint64_t>& rows,
                         const std::vector<std::complex<float>>& values, std::optional<bool> reset = std::nullopt);

/// Applies the journal `path` to the MS `ms` (the JournalApplier of io/stage_folder.hpp). False
/// when another live run holds the MS. Throws MsError when the journal or the MS is unusable.
bool apply_model_journal(const std::string& path, const std::string& ms);

/// Registers apply_model_journal with io's stage folders (the program calls it once at start).
void register_model_journal();

/// Completes or removes what a stopped run left for `ms` (its stage pointer; the caller holds the
/// MS's write lock). Returns a line for the log, or "" when nothing was pending.
std::string settle_stopped_commit(const std::string& ms);

}  // namespace gpuclean::io::ms

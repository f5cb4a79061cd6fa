#pragma once
// Writes model visibilities into MODEL_DATA as WSClean 3.1 does (W31:msproviders/msprovider.cpp
// InitializeModelColumn and ReverseCopyData, contiguousms.cpp WriteModel), measured on wsclean
// -predict:
// - MODEL_DATA absent: added with DATA's cell shape (fixed), every cell zero. WSClean puts it into
//   the data manager named "StandardStMan"; gpuclean gives it a tiled data manager of its own, so
//   that a write stopped while the column is being added leaves files casacore does not list,
//   which the next write removes (in a shared manager's file the bytes would stay for good).
//   Present with another shape, or with an undefined first cell: every cell set to zero (WSClean
//   resets it).
// - Only the rows given (the selection's: its field and data description, no autocorrelation) and
//   only the selected channels change; the rest of MODEL_DATA keeps what it held.
// - Stokes I goes to both XX and YY (or RR and LL), or to the I correlation; -pol xx to XX only.
//   XY and YX are left as they were. Flags do not matter: flagged samples get their prediction too.
// - A non-finite value is written as 0 (WSClean zeroes the selection, then skips it).
// DATA and CORRECTED_DATA are never touched.

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/ms/ms_selection.hpp"

namespace gpuclean::io::ms {

/// True when MODEL_DATA (selection.model_column) is absent, or its first cell is undefined or of
/// another shape than DATA's: the writer then starts from zeros.
bool model_column_needs_reset(const MsSelection& selection);

/// Removes storage files of `ms` (table.fN*) whose data manager N the table does not list: what a
/// column's addition leaves when the process is stopped before casacore recorded the column.
/// Returns how many bytes were removed. The caller holds the MS's write lock.
std::uint64_t remove_orphan_storage(const std::string& ms);

class ModelDataWriter {
 public:
  /// Opens the selection's MS for writing and prepares MODEL_DATA (added or reset as above).
  /// Throws MsError kIo when the MS cannot be written.
  /// `reset`: zero every cell first; by default when MODEL_DATA is absent or unusable as above
  /// (model_column_needs_reset), which a journal records before anything is written.
  explicit ModelDataWriter(const MsSelection& selection, std::optional<bool> reset = std::nullopt);
  ~ModelDataWriter();
  ModelDataWriter(const ModelDataWriter&) = delete;
  ModelDataWriter& operator=(const ModelDataWriter&) = delete;

  /// Writes `values` ([row][channel], the selection's channels in increasing frequency, as
  /// MsReader gives them: MS channels [channel_begin, channel_end), reversed when the selection
  /// is) into the MS rows `rows` (ascending, as MsReader gives them) by the selection's Stokes rule.
  void write(const std::vector<std::uint64_t>& rows, const std::vector<std::complex<float>>& values);

  /// Flushes the table and syncs its files.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuclean::io::ms

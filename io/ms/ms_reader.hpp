#pragma once
// Reads the selected visibilities of one MS in chunks of rows, as Stokes I (or the one
// correlation asked for) with WSClean's weights: autocorrelations and rows of other fields
// dropped, FLAG and FLAG_ROW honoured, the channels in increasing frequency (an MS whose
// frequencies decrease is read with its channel axis reversed: MsSelection::reversed). casacore
// is not thread-safe on one table: one reader per thread and MS.

#include <cstddef>
#include <memory>

#include "io/ms/ms_selection.hpp"
#include "io/ms/vis_chunk.hpp"

namespace gpuclean::io::ms {

class MsReader {
 public:
  static constexpr std::size_t kDefaultChunkRows = std::size_t{1} << 16;

  /// Opens the MS of `selection` (as select_visibilities made it). Throws MsError.
  explicit MsReader(const MsSelection& selection, std::size_t chunk_rows = kDefaultChunkRows);
  ~MsReader();
  MsReader(const MsReader&) = delete;
  MsReader& operator=(const MsReader&) = delete;

  /// Reads the next chunk of at most `chunk_rows` table rows into `chunk` (replacing what it
  /// held; it may keep no row when all were dropped). Returns false when the table is done.
  bool next(VisChunk& chunk);
  const ReadTally& tally() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Throws MsError kEmpty when `tally` (a finished read of `path`) kept no sample with a nonzero
/// weight: "every selected visibility is flagged or has zero weight".
void require_weighted(const ReadTally& tally, const std::string& path);

/// The whole selection in one chunk (small MSs and tests), checked with require_weighted.
VisChunk read_visibilities(const MsSelection& selection, std::size_t chunk_rows = MsReader::kDefaultChunkRows,
                           ReadTally* tally = nullptr);

}  // namespace gpuclean::io::ms

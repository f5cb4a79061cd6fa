#pragma once
// Visibilities as the gridder takes them: a structure of arrays, no casacore type.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuclean::io::ms {

/// Kept rows of one read, `channels` values per row, row-major ([row][channel]).
struct VisChunk {
  std::size_t rows = 0, channels = 0;
  std::vector<std::uint64_t> row;    ///< the MS row each came from (for writing MODEL_DATA back)
  /// UVW in metres, in double as the MS stores them: u·ν/c·δ·n of a large grid needs more than
  /// float's 24 bits (imaging-plan.md §8, risk 5).
  std::vector<double> u, v, w;
  std::vector<std::complex<float>> vis;  ///< [row * channels + channel]
  std::vector<float> weight;             ///< [row * channels + channel]; 0: flagged, not to be gridded

  void clear() {
    rows = 0;
    row.clear(), u.clear(), v.clear(), w.clear(), vis.clear(), weight.clear();
  }
};

/// What a read kept and dropped, for the progress lines and the "everything flagged" check.
struct ReadTally {
  std::size_t rows_read = 0;             ///< rows of the main table visited
  std::size_t rows_kept = 0;             ///< in the chunks
  std::size_t autocorrelation_rows = 0;  ///< dropped: ANTENNA1 == ANTENNA2
  std::size_t other_rows = 0;            ///< dropped: another field or data description
  std::size_t deselected_rows = 0;       ///< dropped: -interval, -even/-odd-timesteps, -minuvw-m, -maxuvw-m
  std::size_t flag_row_rows = 0;         ///< kept with every weight 0: FLAG_ROW set
  std::size_t samples = 0;               ///< kept (row, channel) values
  std::size_t weighted_samples = 0;      ///< of them with a nonzero weight
};

}  // namespace gpuclean::io::ms

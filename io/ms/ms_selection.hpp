#pragma once
// The selection (field, channels, data column, polarization) checked against every MS's metadata
// before any visibility is read; each problem is one sentence that names the MS.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "io/ms/ms_metadata.hpp"
#include "io/ms/stokes.hpp"

namespace gpuclean::io::ms {

/// What the command line asked for (WSClean's option names).
struct SelectionRequest {
  std::optional<int> field;                  ///< -field; absent: the only field with rows
  std::string data_column;                   ///< -data-column; empty: default_data_column(first MS)
  std::optional<std::size_t> channel_begin;  ///< -channel-range s e: channels [s, e), end exclusive
  std::optional<std::size_t> channel_end;
  PolRequest pol = PolRequest::kI;           ///< -pol
};

/// What to read from one MS.
struct MsSelection {
  std::string path;
  std::string data_column;
  int field = 0;
  int data_description = 0;
  std::size_t channel_begin = 0, channel_end = 0;  ///< [begin, end) of the spectral window's channels
  std::vector<double> freq_hz, width_hz;           ///< of the selected channels
  std::size_t ncorr = 0;                           ///< correlations per row of that data description
  StokesRule rule;
  bool weight_spectrum = false;  ///< WEIGHT_SPECTRUM (true) or WEIGHT expanded over channels
  std::size_t rows = 0;          ///< cross-correlation rows of the field (before flags)
  double ra_rad = 0, dec_rad = 0;  ///< the field's J2000 phase centre
  std::string field_name;
};

/// Checks `request` against the metadata of every MS (in command-line order) and says what to
/// read from each. Throws MsError (exit 3) for what the data lacks or cannot give, and
/// clean::InvalidSettings (exit 2) for a request that is wrong whatever the data.
std::vector<MsSelection> select_visibilities(const std::vector<MsMetadata>& sets, const SelectionRequest& request);

}  // namespace gpuclean::io::ms

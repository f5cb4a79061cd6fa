#pragma once
// The selection (field, channels, data column, polarization) checked against every MS's metadata
// before any visibility is read; each problem is one sentence that names the MS.

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/ms/ms_metadata.hpp"
#include "io/ms/stokes.hpp"

namespace gpuclean::io::ms {

/// -even-timesteps, -odd-timesteps.
enum class TimestepParity { kAll, kEven, kOdd };

/// What the command line asked for (WSClean's option names).
struct SelectionRequest {
  /// -field: these ids (WSClean: several must share the phase centre); empty and not all_fields:
  /// the only field with rows.
  std::vector<int> fields;
  bool all_fields = false;                   ///< -field all
  std::set<std::size_t> spws;                ///< -spws; empty: every spectral window (one must remain)
  std::string data_column;                   ///< -data-column; empty: default_data_column(first MS)
  /// -channel-range s e: channels [s, e), end exclusive, counted in increasing frequency (as
  /// WSClean 3.1: the MS's own numbering when its frequencies increase, from its last channel
  /// when they decrease).
  std::optional<std::size_t> channel_begin;
  std::optional<std::size_t> channel_end;
  PolRequest pol = PolRequest::kI;           ///< -pol
  double min_uvw_m = 0, max_uvw_m = 0;       ///< -minuvw-m, -maxuvw-m: rows by |uvw| (0: no limit)
  /// -interval a b: timesteps [a, b) of the MS (its distinct TIME values in row order); absent: all.
  std::optional<std::pair<std::size_t, std::size_t>> interval;
  TimestepParity timestep_parity = TimestepParity::kAll;
  bool subtract_model = false;  ///< -subtract-model: image data - the model column
  std::string model_column = "MODEL_DATA";  ///< -model-column: written by -predict and the loop
};

/// What to read from one MS.
struct MsSelection {
  std::string path;
  std::string data_column;
  int field = 0;            ///< the first selected field (its phase centre is the image's)
  std::vector<int> fields;  ///< every selected field, ascending (one phase centre)
  int data_description = 0;
  /// [begin, end) of the spectral window's channels, as the MS numbers them.
  std::size_t channel_begin = 0, channel_end = 0;
  /// The selected channels in increasing frequency (CHAN_FREQ and CHAN_WIDTH as stored, signs
  /// included): channel c of the selection, of every chunk MsReader gives and of what
  /// ModelDataWriter writes.
  std::vector<double> freq_hz, width_hz;
  /// The spectral window's frequencies decrease (WSRT, lower sidebands): selection channel c is
  /// MS channel channel_end - 1 - c. WSClean 3.1 sorts the channels by frequency in the same way
  /// (W31:main/wsclean.cpp makeImagingTable, structures/msselection.cpp SelectMsChannels).
  bool reversed = false;
  std::size_t ncorr = 0;                           ///< correlations per row of that data description
  PolRequest pol = PolRequest::kI;  ///< the imaged polarization (the request's), made by `rule`
  StokesRule rule;
  bool weight_spectrum = false;  ///< WEIGHT_SPECTRUM (true) or WEIGHT expanded over channels
  std::size_t rows = 0;          ///< cross-correlation rows of the field (before flags)
  double ra_rad = 0, dec_rad = 0;  ///< the field's J2000 phase centre
  std::string field_name;
  double min_uvw_m = 0, max_uvw_m = 0;  ///< rows kept: min <= |uvw| <= max (0: no limit)
  /// Timesteps kept, [begin, end) of the MS's distinct times in row order (the whole MS when
  /// absent), and their parity.
  std::optional<std::pair<std::size_t, std::size_t>> timesteps;
  TimestepParity timestep_parity = TimestepParity::kAll;
  bool subtract_model = false;  ///< read the model column too and image data - model
  std::string model_column = "MODEL_DATA";  ///< the column model visibilities go to (and come from)
};

/// Checks `request` against the metadata of every MS (in command-line order) and says what to
/// read from each. Throws MsError (exit 3) for what the data lacks or cannot give, and
/// clean::InvalidSettings (exit 2) for a request that is wrong whatever the data.
std::vector<MsSelection> select_visibilities(const std::vector<MsMetadata>& sets, const SelectionRequest& request);

}  // namespace gpuclean::io::ms

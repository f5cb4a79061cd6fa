#pragma once
// What a MeasurementSet holds, read once from its main table's description and its subtables
// before any visibility is read. Plain types only: casacore stays inside io/ms/*.cpp.

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gpuclean::io::ms {

/// casacore's Stokes enumeration (CORR_TYPE), the values this reader knows.
enum Correlation : int {
  kCorrI = 1, kCorrQ = 2, kCorrU = 3, kCorrV = 4,
  kCorrRR = 5, kCorrRL = 6, kCorrLR = 7, kCorrLL = 8,
  kCorrXX = 9, kCorrXY = 10, kCorrYX = 11, kCorrYY = 12
};

struct MsField {
  std::string name;
  double ra_rad = 0, dec_rad = 0;  ///< PHASE_DIR in J2000 (valid when `direction_problem` is empty)
  std::string direction_problem;   ///< why PHASE_DIR could not be had in J2000, else empty
};

struct MsSpectralWindow {
  std::vector<double> freq_hz, width_hz;  ///< CHAN_FREQ and CHAN_WIDTH
};

struct MsDataDescription {
  int spectral_window = -1, polarization = -1;
};

struct MsMetadata {
  std::string path;
  std::size_t rows = 0;              ///< rows of the main table
  std::vector<std::string> columns;  ///< the main table's column names
  bool weight_spectrum_defined = false;  ///< WEIGHT_SPECTRUM exists and its first cell holds an array
  std::vector<MsSpectralWindow> spectral_windows;
  std::vector<std::vector<int>> polarizations;  ///< CORR_TYPE of each POLARIZATION row
  std::vector<MsDataDescription> data_descriptions;
  std::vector<MsField> fields;
  std::string telescope, observer;  ///< OBSERVATION row 0 (empty when the table is empty)
  double first_time_s = 0;          ///< TIME of row 0 (MJD seconds)
  /// Cross-correlation rows per (FIELD_ID, DATA_DESC_ID); autocorrelations are never imaged.
  std::map<std::pair<int, int>, std::size_t> cross_rows;
  std::size_t autocorrelation_rows = 0;

  bool has_column(const std::string& name) const;
  /// Fields that have cross-correlation rows, ascending.
  std::vector<int> fields_with_rows() const;
};

/// Opens `path` read-only and reads its metadata. Throws MsError (kNotMs when it is no
/// MeasurementSet, kLayout when a subtable contradicts the main table).
MsMetadata read_ms_metadata(const std::string& path);

/// The MS's timesteps as WSClean counts them: 1 + the number of TIME changes between consecutive
/// rows of the main table (reads TIME only). Throws MsError.
std::size_t count_timesteps(const std::string& path);

/// WSClean's default data column: CORRECTED_DATA if `first` (the first MS given) has it, else DATA.
std::string default_data_column(const MsMetadata& first);

}  // namespace gpuclean::io::ms

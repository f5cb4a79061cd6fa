#pragma once
#include <string>

#include "clean/errors.hpp"

namespace gpuclean::io::ms {

/// A MeasurementSet that cannot be imaged as asked, in one sentence that names the MS. It is an
/// InvalidInput, so the CLI's classify() maps it to exit code 3 like any other bad input;
/// `kind` lets tests and callers tell the cases apart. Usage errors (an unsupported -pol, an empty
/// -channel-range) are clean::InvalidSettings instead (exit code 2).
class MsError : public clean::InvalidInput {
 public:
  enum class Kind {
    kNotMs,          ///< missing, a file, a folder that is no table, or a table that is no MeasurementSet
    kUnreadable,     ///< no permission to read it
    kLocked,         ///< another process holds a permanent write lock on it
    kStorageManager,  ///< a column is stored with a data manager casacore cannot load (LofarStMan, ...)
    kMissingSubtable,  ///< a subtable (SPECTRAL_WINDOW, FIELD, ...) is missing or cannot be opened
    kMissingColumn,  ///< the data column (or another needed column) is absent
    kLayout,         ///< several fields without -field, several spectral windows, unusable correlations
    kSelection,      ///< the selection names what the MS lacks (a field, channels)
    kEmpty,          ///< no rows after selection, or every selected visibility flagged or zero-weight
    kIo,             ///< casacore failed while reading
    kBusy,           ///< another gpuclean run is writing its MODEL_DATA (exit 6, not 3)
  };
  MsError(Kind kind, const std::string& message) : clean::InvalidInput(message), kind_(kind) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

}  // namespace gpuclean::io::ms

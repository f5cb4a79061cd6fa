#pragma once
// Opening a MeasurementSet read-only, with one sentence for each way that fails. casacore's own
// messages name a shared library or a file, not the MS, the table or column at fault, nor what to
// do. Internal to io/ms: it holds a casacore type (the public headers hold none).

#include <string>

#include <casacore/ms/MeasurementSets/MeasurementSet.h>

namespace gpuclean::io::ms {

/// Opens `path` as a MeasurementSet, read-only. Throws MsError, naming the MS: kNotMs (missing,
/// a file, a folder that is no table, a table that is no MS), kUnreadable (no read permission),
/// kLocked (another process holds a permanent write lock: casacore would wait for ever),
/// kStorageManager (a column of the MS or of a subtable is stored with a data manager this
/// casacore cannot load, e.g. LofarStMan; named with its columns), kMissingSubtable (a subtable's
/// folder is missing or no table).
casacore::MeasurementSet open_measurement_set(const std::string& path);

}  // namespace gpuclean::io::ms

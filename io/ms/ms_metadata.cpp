#include "io/ms/ms_metadata.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include <casacore/casa/Arrays/Vector.h>
#include <casacore/casa/Exceptions/Error.h>
#include <casacore/measures/Measures/MCDirection.h>
#include <casacore/measures/Measures/MDirection.h>
#include <casacore/measures/Measures/MEpoch.h>
#include <casacore/measures/Measures/MeasConvert.h>
#include <casacore/measures/Measures/MeasFrame.h>
#include <casacore/ms/MeasurementSets/MSColumns.h>
#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <casacore/tables/Tables/ArrayColumn.h>
#include <casacore/tables/Tables/ScalarColumn.h>
#include <casacore/tables/Tables/Table.h>

#include "io/ms/ms_error.hpp"
#include "io/ms/ms_open.hpp"

namespace gpuclean::io::ms {
namespace {

std::vector<double> to_vector(const casacore::Array<double>& a) {
  return std::vector<double>(a.begin(), a.end());
}

/// PHASE_DIR of `field` in J2000. A J2000 direction needs no measures data; another frame is
/// converted at the first TIME (as WSClean does), which can need casacore-data: when that fails,
/// the field keeps the reason and is refused only if it is selected.
void read_direction(const casacore::MSFieldColumns& fc, int field, double time_s, MsField& out) {
  // A centre that moves (an ephemeris object): PHASE_DIR a polynomial in time (NUM_POLY > 0 with a
  // nonzero higher term), or an ephemeris table (EPHEMERIS_ID >= 0). WSClean 3.1 images such a
  // field at its 0th term, which labels the image with one direction while the data track another.
  const int poly = fc.numPoly()(field);
  bool moves = !fc.ephemerisId().isNull() && fc.ephemerisId()(field) >= 0;
  if (poly > 0) {
    const casacore::Array<double> dir = fc.phaseDir()(field);  // (2, NUM_POLY + 1)
    const double* d = dir.data();
    for (std::size_t i = 2; i < dir.size(); ++i) moves = moves || d[i] != 0;
  }
  if (moves) {
    out.direction_problem = "its phase centre moves (FIELD PHASE_DIR " +
                            (poly > 0 ? "is a polynomial in time, NUM_POLY " + std::to_string(poly)
                                      : "follows an ephemeris table, EPHEMERIS_ID " +
                                            std::to_string(fc.ephemerisId()(field))) +
                            "), which gpuclean cannot image: fix the field to one direction first (e.g. CASA's "
                            "fixplanets with fixuvw=True), or choose another field with -field";
    return;
  }
  try {
    casacore::MDirection dir = fc.phaseDirMeas(field);
    if (dir.getRef().getType() != casacore::MDirection::J2000) {
      casacore::MeasFrame frame(casacore::MEpoch(casacore::Quantity(time_s, "s"), casacore::MEpoch::UTC));
      dir = casacore::MDirection::Convert(dir, casacore::MDirection::Ref(casacore::MDirection::J2000, frame))();
    }
    const casacore::Vector<double> angle = dir.getAngle("rad").getValue();
    out.ra_rad = angle(0);
    out.dec_rad = angle(1);
  } catch (const casacore::AipsError& e) {
    out.direction_problem = std::string("its PHASE_DIR cannot be converted to J2000 (") + e.what() + ")";
  }
}

MsMetadata read(const casacore::MeasurementSet& table, const std::string& path) {
  // The subtables read below: casacore opens an MS whose main table lacks their keyword.
  for (const char* name : {"SPECTRAL_WINDOW", "POLARIZATION", "DATA_DESCRIPTION", "FIELD", "OBSERVATION"})
    if (!table.keywordSet().isDefined(name))
      throw MsError(MsError::Kind::kMissingSubtable,
                    "'" + path + "' has no " + name + " subtable (its main table has no " + name +
                        " keyword): the MS is incomplete; use the original MS");
  MsMetadata m;
  m.path = path;
  m.rows = table.nrow();
  const casacore::TableDesc& desc = table.tableDesc();
  for (const casacore::String& name : desc.columnNames()) m.columns.push_back(name);
  if (desc.isColumn("WEIGHT_SPECTRUM") && m.rows > 0) {
    casacore::ArrayColumn<float> ws(table, "WEIGHT_SPECTRUM");
    m.weight_spectrum_defined = ws.isDefined(0);
  }

  const casacore::MSSpWindowColumns spw(table.spectralWindow());
  for (casacore::rownr_t r = 0; r < table.spectralWindow().nrow(); ++r)
    m.spectral_windows.push_back({to_vector(spw.chanFreq()(r)), to_vector(spw.chanWidth()(r))});
  const casacore::MSPolarizationColumns pol(table.polarization());
  for (casacore::rownr_t r = 0; r < table.polarization().nrow(); ++r) {
    const casacore::Vector<int> types = pol.corrType()(r);
    m.polarizations.emplace_back(types.begin(), types.end());
  }
  const casacore::MSDataDescColumns dd(table.dataDescription());
  for (casacore::rownr_t r = 0; r < table.dataDescription().nrow(); ++r)
    m.data_descriptions.push_back({dd.spectralWindowId()(r), dd.polarizationId()(r)});

  const casacore::MSMainColumns mc(table);
  if (m.rows > 0) m.first_time_s = mc.time()(0);
  std::unique_ptr<casacore::MSFieldColumns> fc;
  try {  // it opens the ephemeris tables that EPHEMERIS_ID names
    fc = std::make_unique<casacore::MSFieldColumns>(table.field());
  } catch (const casacore::AipsError& e) {
    std::string why = e.what();
    std::replace(why.begin(), why.end(), '\n', ' ');
    throw MsError(MsError::Kind::kMissingSubtable, "'" + path + "': its FIELD subtable cannot be read (" + why +
                                                       "): restore the FIELD folder from the original MS");
  }
  for (casacore::rownr_t r = 0; r < table.field().nrow(); ++r) {
    MsField f;
    f.name = fc->name()(r);
    read_direction(*fc, static_cast<int>(r), m.first_time_s, f);
    m.fields.push_back(std::move(f));
  }
  const casacore::MSObservationColumns oc(table.observation());
  if (table.observation().nrow() > 0) {
    m.telescope = oc.telescopeName()(0);
    m.observer = oc.observer()(0);
  }

  // Integer columns only (12 bytes a row): which fields and data descriptions have rows to image.
  if (m.rows > 0) {
    const casacore::Vector<int> field = mc.fieldId().getColumn(), ddid = mc.dataDescId().getColumn(),
                                a1 = mc.antenna1().getColumn(), a2 = mc.antenna2().getColumn();
    for (std::size_t r = 0; r < m.rows; ++r) {
      if (a1(r) == a2(r)) {
        ++m.autocorrelation_rows;
        continue;
      }
      ++m.cross_rows[{field(r), ddid(r)}];
    }
  }
  for (const auto& entry : m.cross_rows) {
    const auto [f, d] = entry.first;
    if (f < 0 || static_cast<std::size_t>(f) >= m.fields.size())
      throw MsError(MsError::Kind::kLayout,
                    "'" + path + "' has rows of FIELD_ID " + std::to_string(f) + ", which its FIELD table lacks");
    if (d < 0 || static_cast<std::size_t>(d) >= m.data_descriptions.size())
      throw MsError(MsError::Kind::kLayout, "'" + path + "' has rows of DATA_DESC_ID " + std::to_string(d) +
                                                ", which its DATA_DESCRIPTION table lacks");
  }
  for (const MsDataDescription& d : m.data_descriptions) {
    if (d.spectral_window < 0 || static_cast<std::size_t>(d.spectral_window) >= m.spectral_windows.size() ||
        d.polarization < 0 || static_cast<std::size_t>(d.polarization) >= m.polarizations.size())
      throw MsError(MsError::Kind::kLayout,
                    "'" + path + "' has a DATA_DESCRIPTION row that names a missing spectral window or polarization");
  }
  return m;
}

}  // namespace

bool MsMetadata::has_column(const std::string& name) const {
  return std::find(columns.begin(), columns.end(), name) != columns.end();
}

std::vector<int> MsMetadata::fields_with_rows() const {
  std::set<int> ids;
  for (const auto& entry : cross_rows) ids.insert(entry.first.first);
  return {ids.begin(), ids.end()};
}

MsMetadata read_ms_metadata(const std::string& path) {
  const casacore::MeasurementSet table = open_measurement_set(path);
  try {
    return read(table, path);
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "reading the metadata of '" + path + "' failed: " + std::string(e.what()));
  }
}

std::size_t count_timesteps(const std::string& path) {
  const casacore::MeasurementSet table = open_measurement_set(path);
  try {
    if (table.nrow() == 0) return 0;
    const casacore::Vector<double> time = casacore::MSMainColumns(table).time().getColumn();
    std::size_t steps = 1;
    for (std::size_t r = 1; r < time.size(); ++r) steps += time(r) != time(r - 1);
    return steps;
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "reading TIME of '" + path + "' failed: " + std::string(e.what()));
  }
}

std::string default_data_column(const MsMetadata& first) {
  return first.has_column("CORRECTED_DATA") ? "CORRECTED_DATA" : "DATA";
}

}  // namespace gpuclean::io::ms

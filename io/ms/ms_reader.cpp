#include "io/ms/ms_reader.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <casacore/casa/Arrays/Array.h>
#include <casacore/casa/Arrays/Slicer.h>
#include <casacore/casa/Exceptions/Error.h>
#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <casacore/tables/Tables/ArrayColumn.h>
#include <casacore/tables/Tables/RefRows.h>
#include <casacore/tables/Tables/ScalarColumn.h>

#include "io/ms/ms_error.hpp"
#include "io/ms/ms_open.hpp"

namespace gpuclean::io::ms {

struct MsReader::Impl {
  MsSelection sel;
  std::size_t chunk_rows;
  casacore::MeasurementSet table;
  casacore::ScalarColumn<int> field, ddid, antenna1, antenna2;
  casacore::ScalarColumn<double> time;
  std::optional<casacore::ScalarColumn<bool>> flag_row;
  casacore::ArrayColumn<double> uvw;
  casacore::ArrayColumn<casacore::Complex> data;
  std::optional<casacore::ArrayColumn<casacore::Complex>> model;  ///< -subtract-model
  casacore::ArrayColumn<bool> flag;
  casacore::ArrayColumn<float> weight;  ///< WEIGHT_SPECTRUM or WEIGHT
  std::size_t next_row = 0;
  ReadTally tally;
  std::vector<float> row_weight;  ///< one row's [channel][correlation] weights when WEIGHT is expanded
  std::vector<casacore::Complex> row_data;  ///< one row's data - model (-subtract-model)
  std::vector<std::size_t> at;              ///< each row of the chunk: its place in the cells read
  // The timestep of the row last read: WSClean's count of TIME changes in row order from row 0.
  std::size_t timestep = 0;
  double last_time = 0;
  bool first_row = true;

  bool keeps(std::size_t timestep_index, const double* uvw_row) const;

  Impl(const MsSelection& s, std::size_t rows)
      : sel(s), chunk_rows(std::max<std::size_t>(rows, 1)), table(open_measurement_set(s.path)),
        field(table, "FIELD_ID"), ddid(table, "DATA_DESC_ID"), antenna1(table, "ANTENNA1"),
        antenna2(table, "ANTENNA2"), time(table, "TIME"), uvw(table, "UVW"), data(table, s.data_column),
        flag(table, "FLAG"), weight(table, s.weight_spectrum ? "WEIGHT_SPECTRUM" : "WEIGHT") {
    if (table.tableDesc().isColumn("FLAG_ROW")) flag_row.emplace(table, "FLAG_ROW");
    if (s.subtract_model) model.emplace(table, s.model_column);
  }

  bool next(VisChunk& chunk);
};

// WSClean's MSSelection::IsSelected, less the field and autocorrelations (checked before).
bool MsReader::Impl::keeps(std::size_t t, const double* p) const {
  if (sel.timesteps && (t < sel.timesteps->first || t >= sel.timesteps->second)) return false;
  if (sel.min_uvw_m > 0 || sel.max_uvw_m > 0) {
    const double length = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    if (sel.min_uvw_m > 0 && length < sel.min_uvw_m) return false;
    if (sel.max_uvw_m > 0 && length > sel.max_uvw_m) return false;
  }
  if (sel.timestep_parity == TimestepParity::kEven && t % 2 != 0) return false;
  if (sel.timestep_parity == TimestepParity::kOdd && t % 2 != 1) return false;
  return true;
}

bool MsReader::Impl::next(VisChunk& chunk) {
  chunk.clear();
  const std::size_t nchan = sel.channel_end - sel.channel_begin, ncorr = sel.ncorr;
  chunk.channels = nchan;
  if (next_row >= table.nrow()) return false;
  const std::size_t r0 = next_row, r1 = std::min<std::size_t>(r0 + chunk_rows, table.nrow()) - 1;
  next_row = r1 + 1;
  const std::size_t n = r1 - r0 + 1;

  const casacore::Slicer rows(casacore::IPosition(1, r0), casacore::IPosition(1, r1), casacore::Slicer::endIsLast);
  const casacore::Slicer cells(casacore::IPosition(2, 0, sel.channel_begin),
                               casacore::IPosition(2, ncorr - 1, sel.channel_end - 1), casacore::Slicer::endIsLast);
  const casacore::Vector<int> f = field.getColumnRange(rows), d = ddid.getColumnRange(rows),
                              a1 = antenna1.getColumnRange(rows), a2 = antenna2.getColumnRange(rows);
  const casacore::Vector<double> t = time.getColumnRange(rows);
  const casacore::Vector<bool> fr = flag_row ? flag_row->getColumnRange(rows) : casacore::Vector<bool>(n, false);
  const casacore::Array<double> uvw_a = uvw.getColumnRange(rows);                             // (3, n)
  // The cells of the rows of the selected data description: all n rows of the chunk in one range
  // read, unless rows of another data description lie among them, whose cells may have another
  // shape (a spectral window of fewer channels, another polarization setup): then those rows alone.
  // at[i]: row i's place in the arrays read.
  std::vector<casacore::rownr_t> own;
  at.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (d(i) == sel.data_description) at[i] = own.size(), own.push_back(r0 + i);
  casacore::Array<casacore::Complex> data_a, model_a;
  casacore::Array<bool> flag_a;
  casacore::Array<float> weight_a;
  if (own.size() == n) {
    data_a = data.getColumnRange(rows, cells);                                                 // (ncorr, nchan, n)
    if (model) model_a = model->getColumnRange(rows, cells);
    flag_a = flag.getColumnRange(rows, cells);                                                 // (ncorr, nchan, n)
    weight_a = sel.weight_spectrum ? weight.getColumnRange(rows, cells) : weight.getColumnRange(rows);  // or (ncorr, n)
  } else if (!own.empty()) {
    const casacore::RefRows refs(casacore::Vector<casacore::rownr_t>(own), false, true);
    data_a = data.getColumnCells(refs, cells);
    if (model) model_a = model->getColumnCells(refs, cells);
    flag_a = flag.getColumnCells(refs, cells);
    weight_a = sel.weight_spectrum ? weight.getColumnCells(refs, cells) : weight.getColumnCells(refs);
  }
  const double* uvw_p = uvw_a.data();
  const casacore::Complex* data_p = data_a.data();
  const casacore::Complex* model_p = model ? model_a.data() : nullptr;
  const bool* flag_p = flag_a.data();
  const float* weight_p = weight_a.data();
  const std::size_t cell = nchan * ncorr;
  row_weight.resize(cell);
  for (auto* v : {&chunk.u, &chunk.v, &chunk.w}) v->reserve(n);
  chunk.row.reserve(n);
  chunk.vis.reserve(n * nchan);
  chunk.weight.reserve(n * nchan);

  tally.rows_read += n;
  for (std::size_t i = 0; i < n; ++i) {
    if (first_row) first_row = false, last_time = t(i);
    if (t(i) != last_time) ++timestep, last_time = t(i);
    if (a1(i) == a2(i)) {
      ++tally.autocorrelation_rows;
      continue;
    }
    if (!std::binary_search(sel.fields.begin(), sel.fields.end(), f(i)) || d(i) != sel.data_description) {
      ++tally.other_rows;
      continue;
    }
    if (!keeps(timestep, uvw_p + 3 * i)) {
      ++tally.deselected_rows;
      continue;
    }
    const casacore::Complex* row_values = data_p + at[i] * cell;
    if (model_p) {
      row_data.resize(cell);
      for (std::size_t k = 0; k < cell; ++k) row_data[k] = row_values[k] - model_p[at[i] * cell + k];
      row_values = row_data.data();
    }
    const float* w = weight_p + at[i] * (sel.weight_spectrum ? cell : ncorr);
    if (!sel.weight_spectrum) {
      for (std::size_t c = 0; c < nchan; ++c) std::copy(w, w + ncorr, row_weight.begin() + c * ncorr);
      w = row_weight.data();
    }
    const std::size_t k = chunk.rows++;
    chunk.row.push_back(r0 + i);
    chunk.u.push_back(uvw_p[3 * i]);
    chunk.v.push_back(uvw_p[3 * i + 1]);
    chunk.w.push_back(uvw_p[3 * i + 2]);
    chunk.vis.resize(chunk.rows * nchan);
    chunk.weight.resize(chunk.rows * nchan);
    apply_stokes_rule(sel.rule, nchan, ncorr, row_values, flag_p + at[i] * cell, w, chunk.vis.data() + k * nchan,
                      chunk.weight.data() + k * nchan);
    if (sel.reversed) {  // decreasing frequencies: the chunk's channels in increasing frequency
      std::reverse(chunk.vis.begin() + k * nchan, chunk.vis.begin() + (k + 1) * nchan);
      std::reverse(chunk.weight.begin() + k * nchan, chunk.weight.begin() + (k + 1) * nchan);
    }
    // FLAG_ROW flags the whole row whatever FLAG says (WSClean 3.1 and 3.6 ignore it).
    if (fr(i)) {
      ++tally.flag_row_rows;
      std::fill_n(chunk.weight.begin() + k * nchan, nchan, 0.0f);
    }
    for (std::size_t c = 0; c < nchan; ++c) tally.weighted_samples += chunk.weight[k * nchan + c] != 0.0f;
  }
  tally.rows_kept += chunk.rows;
  tally.samples += chunk.rows * nchan;
  return true;
}

MsReader::MsReader(const MsSelection& selection, std::size_t chunk_rows) {
  try {
    impl_ = std::make_unique<Impl>(selection, chunk_rows);
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "opening '" + selection.path + "' failed: " + std::string(e.what()));
  }
}

MsReader::~MsReader() = default;

bool MsReader::next(VisChunk& chunk) {
  try {
    return impl_->next(chunk);
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "reading '" + impl_->sel.path + "' failed: " + std::string(e.what()));
  }
}

const ReadTally& MsReader::tally() const { return impl_->tally; }

void require_weighted(const ReadTally& tally, const std::string& path) {
  if (tally.rows_kept == 0)
    throw MsError(MsError::Kind::kEmpty, "'" + path + "' has no rows in the selection");
  if (tally.weighted_samples == 0)
    throw MsError(MsError::Kind::kEmpty,
                  "every selected visibility of '" + path + "' is flagged or has zero weight");
}

VisChunk read_visibilities(const MsSelection& selection, std::size_t chunk_rows, ReadTally* tally) {
  MsReader reader(selection, chunk_rows);
  VisChunk all, chunk;
  all.channels = selection.channel_end - selection.channel_begin;
  while (reader.next(chunk)) {
    all.rows += chunk.rows;
    all.row.insert(all.row.end(), chunk.row.begin(), chunk.row.end());
    all.u.insert(all.u.end(), chunk.u.begin(), chunk.u.end());
    all.v.insert(all.v.end(), chunk.v.begin(), chunk.v.end());
    all.w.insert(all.w.end(), chunk.w.begin(), chunk.w.end());
    all.vis.insert(all.vis.end(), chunk.vis.begin(), chunk.vis.end());
    all.weight.insert(all.weight.end(), chunk.weight.begin(), chunk.weight.end());
  }
  if (tally) *tally = reader.tally();
  require_weighted(reader.tally(), selection.path);
  return all;
}

}  // namespace gpuclean::io::ms

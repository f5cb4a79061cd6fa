#include "io/ms/ms_writer.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <casacore/casa/Arrays/Array.h>
#include <casacore/casa/Arrays/Slicer.h>
#include <casacore/casa/Exceptions/Error.h>
#include <casacore/tables/Tables/ArrColDesc.h>
#include <casacore/tables/Tables/ArrayColumn.h>
#include <casacore/tables/Tables/Table.h>
#include <casacore/tables/Tables/TableDesc.h>
#include <casacore/tables/DataMan/TiledColumnStMan.h>
#include <casacore/casa/Containers/Record.h>

#include "io/ms/ms_error.hpp"

namespace gpuclean::io::ms {
namespace {

constexpr std::uint64_t kMaxSpan = std::uint64_t{1} << 15;  // table rows per get/put

/// Adds the model column in a tiled data manager of its own (files table.fN*, N its number), tiles
/// of about 1 MiB over whole cells, as CASA's MODEL_DATA.
void add_model_column(casacore::Table& table, const std::string& name, const casacore::IPosition& shape) {
  const casacore::ArrayColumnDesc<casacore::Complex> desc(name, shape, casacore::ColumnDesc::FixedShape);
  const casacore::Int cell = static_cast<casacore::Int>(shape.product());
  casacore::IPosition tile(shape.size() + 1, 1);
  for (std::size_t i = 0; i < shape.size(); ++i) tile[i] = shape[i];
  tile[shape.size()] = std::max<casacore::Int>(1, (1 << 17) / std::max<casacore::Int>(cell, 1));
  casacore::TiledColumnStMan manager("Gpuclean" + name, tile);
  table.addColumn(desc, manager);
}

bool needs_reset(const casacore::Table& table, const std::string& column, const casacore::IPosition& shape) {
  if (!table.tableDesc().isColumn(column)) return true;
  const casacore::ArrayColumn<casacore::Complex> model(table, column);
  return table.nrow() > 0 && (!model.isDefined(0) || model.shape(0) != shape);
}

casacore::IPosition cell_shape(const casacore::Table& table, const MsSelection& s) {
  const std::string shape_from = table.tableDesc().isColumn("DATA") ? "DATA" : s.data_column;
  return casacore::ArrayColumn<casacore::Complex>(table, shape_from).shape(0);
}

}  // namespace

struct ModelDataWriter::Impl {
  MsSelection sel;
  casacore::Table table;
  casacore::ArrayColumn<casacore::Complex> model;

  Impl(const MsSelection& s, std::optional<bool> reset) : sel(s), table(s.path, casacore::Table::Update) {
    const casacore::IPosition shape = cell_shape(table, s);
    const bool zero = reset ? *reset : needs_reset(table, s.model_column, shape);
    if (!table.tableDesc().isColumn(s.model_column)) add_model_column(table, s.model_column, shape);
    model.attach(table, s.model_column);
    if (zero) model.fillColumn(casacore::Array<casacore::Complex>(shape, casacore::Complex(0, 0)));
  }

  void write(const std::vector<std::uint64_t>& rows, const std::vector<std::complex<float>>& values);
};

void ModelDataWriter::Impl::write(const std::vector<std::uint64_t>& rows,
                                  const std::vector<std::complex<float>>& values) {
  const std::size_t nchan = sel.channel_end - sel.channel_begin, ncorr = sel.ncorr;
  if (values.size() != rows.size() * nchan)
    throw MsError(MsError::Kind::kIo, "writing " + sel.model_column + " of '" + sel.path + "': values do not match the rows");
  const casacore::Slicer cells(casacore::IPosition(2, 0, sel.channel_begin),
                               casacore::IPosition(2, ncorr - 1, sel.channel_end - 1), casacore::Slicer::endIsLast);
  // Row ranges of at most kMaxSpan table rows: read the cells, set the rule's correlations of
  // the given rows, write back (rows in between keep their values).
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j + 1 < rows.size() && rows[j + 1] - rows[i] < kMaxSpan) ++j;
    const casacore::Slicer range(casacore::IPosition(1, rows[i]), casacore::IPosition(1, rows[j]),
                                 casacore::Slicer::endIsLast);
    casacore::Array<casacore::Complex> cell = model.getColumnRange(range, cells);  // (ncorr, nchan, n)
    casacore::Complex* p = cell.data();
    for (std::size_t k = i; k <= j; ++k) {
      casacore::Complex* row = p + (rows[k] - rows[i]) * nchan * ncorr;
      for (std::size_t c = 0; c < nchan; ++c) {
        std::complex<float> v = values[k * nchan + c];
        if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) v = 0;
        const std::size_t ms_c = sel.reversed ? nchan - 1 - c : c;  // values in increasing frequency
        put_stokes_value(sel.rule, v, row + ms_c * ncorr);
      }
    }
    model.putColumnRange(range, cells, cell);
    i = j + 1;
  }
}

bool model_column_needs_reset(const MsSelection& s) {
  try {
    const casacore::Table table(s.path);
    return needs_reset(table, s.model_column, cell_shape(table, s));
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "cannot read " + s.model_column + " of '" + s.path + "': " + std::string(e.what()));
  }
}

std::uint64_t remove_orphan_storage(const std::string& ms) {
  std::set<unsigned> listed;
  try {
    const casacore::Table table(ms, casacore::Table::Update);  // waits for casacore's write lock
    const casacore::Record managers = table.dataManagerInfo();
    for (casacore::uInt i = 0; i < managers.nfields(); ++i)
      listed.insert(static_cast<unsigned>(managers.subRecord(i).asInt("SEQNR")));
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "cannot open '" + ms + "' for writing: " + std::string(e.what()));
  }
  std::uint64_t bytes = 0;
  namespace fs = std::filesystem;
  for (const fs::directory_entry& e : fs::directory_iterator(ms)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("table.f", 0) != 0 || name.size() < 8 || !std::isdigit(static_cast<unsigned char>(name[7]))) continue;
    const unsigned n = static_cast<unsigned>(std::strtoul(name.c_str() + 7, nullptr, 10));
    // Only numbers past every listed manager: a manager being added is always the next one.
    if (listed.count(n) || (!listed.empty() && n < *listed.rbegin()) || !e.is_regular_file()) continue;
    bytes += e.file_size();
    fs::remove(e.path());
  }
  return bytes;
}

ModelDataWriter::ModelDataWriter(const MsSelection& selection, std::optional<bool> reset) {
  try {
    impl_ = std::make_unique<Impl>(selection, reset);
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "cannot write " + selection.model_column + " of '" + selection.path + "': " + std::string(e.what()));
  }
}

ModelDataWriter::~ModelDataWriter() = default;

void ModelDataWriter::finish() {
  try {
    impl_->table.flush(true, false);
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "writing " + impl_->sel.model_column + " of '" + impl_->sel.path + "' failed: " + std::string(e.what()));
  }
}

void ModelDataWriter::write(const std::vector<std::uint64_t>& rows, const std::vector<std::complex<float>>& values) {
  try {
    impl_->write(rows, values);
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "writing " + impl_->sel.model_column + " of '" + impl_->sel.path + "' failed: " + std::string(e.what()));
  }
}

}  // namespace gpuclean::io::ms

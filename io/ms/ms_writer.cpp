#include "io/ms/ms_writer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <casacore/casa/Arrays/Array.h>
#include <casacore/casa/Arrays/Slicer.h>
#include <casacore/casa/Exceptions/Error.h>
#include <casacore/tables/Tables/ArrColDesc.h>
#include <casacore/tables/Tables/ArrayColumn.h>
#include <casacore/tables/Tables/Table.h>
#include <casacore/tables/Tables/TableDesc.h>

#include "io/ms/ms_error.hpp"

namespace gpuclean::io::ms {
namespace {

constexpr std::uint64_t kMaxSpan = std::uint64_t{1} << 15;  // table rows per get/put

/// Adds the model column as W31 InitializeModelColumn does: first into the data manager *named*
/// StandardStMan (where simulated and CASA-made MSs keep their scalar columns), and when there is
/// none, into a new one of that type.
void add_model_column(casacore::Table& table, const std::string& name, const casacore::IPosition& shape) {
  const casacore::ArrayColumnDesc<casacore::Complex> desc(name, shape, casacore::ColumnDesc::FixedShape);
  try {
    table.addColumn(desc, "StandardStMan", true);
  } catch (const casacore::AipsError&) {
    table.addColumn(desc, "StandardStMan", false);
  }
}

}  // namespace

struct ModelDataWriter::Impl {
  MsSelection sel;
  casacore::Table table;
  casacore::ArrayColumn<casacore::Complex> model;

  explicit Impl(const MsSelection& s) : sel(s), table(s.path, casacore::Table::Update) {
    const std::string shape_from = table.tableDesc().isColumn("DATA") ? "DATA" : s.data_column;
    const casacore::IPosition shape = casacore::ArrayColumn<casacore::Complex>(table, shape_from).shape(0);
    const bool existed = table.tableDesc().isColumn(s.model_column);
    if (!existed) add_model_column(table, s.model_column, shape);
    model.attach(table, s.model_column);
    if (!existed || !model.isDefined(0) || model.shape(0) != shape)
      model.fillColumn(casacore::Array<casacore::Complex>(shape, casacore::Complex(0, 0)));
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
  const bool both = sel.rule.kind == StokesRule::Kind::kAverage;
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
        row[ms_c * ncorr + sel.rule.a] = v;
        if (both) row[ms_c * ncorr + sel.rule.b] = v;
      }
    }
    model.putColumnRange(range, cells, cell);
    i = j + 1;
  }
}

ModelDataWriter::ModelDataWriter(const MsSelection& selection) {
  try {
    impl_ = std::make_unique<Impl>(selection);
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "cannot write " + selection.model_column + " of '" + selection.path + "': " + std::string(e.what()));
  }
}

ModelDataWriter::~ModelDataWriter() = default;

void ModelDataWriter::write(const std::vector<std::uint64_t>& rows, const std::vector<std::complex<float>>& values) {
  try {
    impl_->write(rows, values);
  } catch (const casacore::AipsError& e) {
    throw MsError(MsError::Kind::kIo, "writing " + impl_->sel.model_column + " of '" + impl_->sel.path + "' failed: " + std::string(e.what()));
  }
}

}  // namespace gpuclean::io::ms

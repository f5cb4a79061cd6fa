#include "io/ms/ms_open.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include <casacore/casa/Exceptions/Error.h>
#include <casacore/casa/IO/AipsIO.h>
#include <casacore/casa/IO/ArrayIO.h>
#include <casacore/casa/IO/LockFile.h>
#include <casacore/tables/DataMan/DataManager.h>
#include <casacore/tables/Tables/ColumnDesc.h>
#include <casacore/tables/Tables/Table.h>
#include <casacore/tables/Tables/TableAttr.h>
#include <casacore/tables/Tables/TableDesc.h>
#include <casacore/tables/Tables/TableRecord.h>

#include "io/ms/ms_error.hpp"

namespace gpuclean::io::ms {
namespace {

namespace fs = std::filesystem;
using Kind = MsError::Kind;

std::string quoted(const std::string& path) { return "'" + path + "'"; }

/// casacore's message on one line (its DynLib and table errors span several).
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

/// A folder that is there, readable, and holds a table (table.dat): the checks casacore makes
/// too, said for a user.
void check_folder(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status))
    throw MsError(Kind::kNotMs, quoted(path) + " does not exist: give the path of a MeasurementSet (a folder that "
                                               "holds table.dat)");
  if (!fs::is_directory(status))
    throw MsError(Kind::kNotMs, quoted(path) + " is a file, not a MeasurementSet (an MS is a folder of casacore "
                                               "tables): give the MS's folder");
  if (::access(path.c_str(), R_OK | X_OK) != 0)
    throw MsError(Kind::kUnreadable, quoted(path) + " cannot be read (" + std::strerror(errno) +
                                         "): give this user read access to the MS (chmod -R a+rX) or run as its owner");
  const std::string dat = path + "/table.dat";
  if (!fs::exists(dat, error))
    throw MsError(Kind::kNotMs, quoted(path) + " is a folder but not a casacore table (it has no table.dat): give "
                                               "the MeasurementSet's own folder");
  if (::access(dat.c_str(), R_OK) != 0)
    throw MsError(Kind::kUnreadable, quoted(path) + " cannot be read (table.dat: " + std::strerror(errno) +
                                         "): give this user read access to the MS (chmod -R a+rX) or run as its owner");
}

/// A permanent write lock held by another process (a casacore program that opened the MS for
/// writing with permanent locking): casacore would wait for it for ever. A lock that is not
/// permanent is released on request, so casacore's wait is kept for it.
void check_not_locked(const std::string& path) {
  const std::string lock = path + "/table.lock";
  std::error_code error;
  if (!fs::exists(lock, error)) return;
  casacore::uInt pid = 0;
  casacore::Bool permanent = false;
  casacore::uInt state = 0;
  try {
    state = casacore::LockFile::showLock(pid, permanent, lock);
  } catch (const casacore::AipsError&) {
    return;  // an unreadable lock file: casacore decides
  }
  if (state == 3 && permanent)
    throw MsError(Kind::kLocked, quoted(path) + " is locked for writing by process " + std::to_string(pid) +
                                     " (a permanent lock): close the MS in that process, or let it finish, and run "
                                     "again");
}

/// One data manager of a table: its type and the columns it stores.
struct DataManagerUse {
  std::string type;
  std::vector<std::string> columns;
};

/// The data managers of the table in `dir`, read from its table.dat the way casacore's
/// PlainTable and ColumnSet read it (Table versions 2 and 3, ColumnSet versions 2 and 3), without
/// constructing them, which is what fails when one cannot be loaded. Other layouts give none.
/// Throws casacore::AipsError on a file it cannot parse.
std::vector<DataManagerUse> read_data_managers(const std::string& dir) {
  casacore::AipsIO io(dir + "/table.dat");
  const casacore::uInt version = io.getstart("Table");
  if (version < 2 || version > 3) return {};
  if (version == 3) {
    casacore::rownr_t rows;
    io >> rows;
  } else {
    casacore::uInt rows;
    io >> rows;
  }
  casacore::uInt format;
  casacore::String kind;
  io >> format >> kind;
  if (kind != "PlainTable") return {};
  casacore::TableDesc desc;
  desc.getFile(io, casacore::TableAttr(dir));
  casacore::Int set_version;
  io >> set_version;
  if (set_version >= 0) return {};  // version 1: columns in name order, not read here
  set_version = -set_version;
  if (set_version > 3) return {};
  if (set_version == 3) {
    casacore::rownr_t rows;
    casacore::Int option, buffer;
    io >> rows >> option >> buffer;
  } else {
    casacore::uInt rows;
    io >> rows;
  }
  casacore::uInt sequence_count, managers;
  io >> sequence_count >> managers;
  std::vector<DataManagerUse> out;
  std::map<casacore::uInt, std::size_t> by_sequence;
  for (casacore::uInt i = 0; i < managers; ++i) {
    casacore::String type;
    casacore::uInt sequence;
    io >> type >> sequence;
    by_sequence[sequence] = out.size();
    out.push_back({type, {}});
  }
  // Each column: version 2 (1 put a keyword record here), its name, then its data's version and
  // the sequence number of its data manager (arrays: then whether a shape follows, and the shape).
  for (casacore::uInt c = 0; c < desc.ncolumn(); ++c) {
    const casacore::ColumnDesc& column = desc.columnDesc(c);
    casacore::uInt column_version, data_version, sequence;
    casacore::String name;
    io >> column_version;
    if (column_version != 2 || !(column.isScalar() || column.isArray()))
      throw casacore::AipsError("unexpected column layout");
    io >> name >> data_version >> sequence;
    if (column.isArray()) {
      casacore::Bool has_shape;
      io >> has_shape;
      if (has_shape) {
        casacore::IPosition shape;
        io >> shape;
      }
    }
    const auto it = by_sequence.find(sequence);
    if (it != by_sequence.end()) out[it->second].columns.push_back(column.name());
  }
  return out;
}

/// Whether casacore has, or can load, the data manager `type` (as opening a table would).
bool loadable(const std::string& type) {
  try {
    casacore::DataManager::getCtor(type);
  } catch (const std::exception&) {
  }
  return casacore::DataManager::isRegistered(type);
}

/// The shared library casacore looks for: the type in lower case, up to a '.' or '<'.
std::string library_of(const std::string& type) {
  std::string name = type.substr(0, type.find_first_of(".<"));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "lib" + name + ".so";
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

/// Throws kStorageManager when a column of the table in `dir` (the MS, or its subtable `subtable`)
/// is stored with a data manager that cannot be loaded; returns when none is, or when table.dat
/// cannot be parsed (the caller then reports casacore's own message).
void check_data_managers(const std::string& ms, const std::string& dir, const std::string& subtable) {
  std::vector<DataManagerUse> managers;
  try {
    managers = read_data_managers(dir);
  } catch (const std::exception&) {
    return;
  }
  for (const DataManagerUse& m : managers) {
    if (m.columns.empty() || loadable(m.type)) continue;
    const std::string what = (m.columns.size() == 1 ? "column " : "columns ") + list(m.columns) +
                             (subtable.empty() ? "" : " of its " + subtable + " subtable") +
                             (m.columns.size() == 1 ? " is" : " are");
    const std::string dysco = m.type == "DyscoStMan" ? " (casacore 3.5 and later include DyscoStMan)" : "";
    throw MsError(Kind::kStorageManager,
                  quoted(ms) + ": " + what + " stored with " + m.type + ", a storage manager this casacore cannot " +
                      "load (it looks for " + library_of(m.type) + " in CASACORE_LDPATH and LD_LIBRARY_PATH): " +
                      "install the library that provides it" + dysco + ", or have a program that reads it write a " +
                      "copy with casacore's standard storage managers (e.g. DP3 msin=IN msout=OUT steps=[])");
  }
}

/// Why opening `path` as a MeasurementSet failed with `error`, as one MsError.
[[noreturn]] void explain(const std::string& path, const casacore::AipsError& error) {
  check_data_managers(path, path, "");
  std::unique_ptr<casacore::Table> table;
  try {
    table = std::make_unique<casacore::Table>(path, casacore::Table::Old);
  } catch (const casacore::AipsError& e) {
    throw MsError(Kind::kNotMs, quoted(path) + " cannot be opened as a casacore table (" + one_line(e.what()) + ")");
  }
  const casacore::TableRecord& keywords = table->keywordSet();
  for (casacore::uInt i = 0; i < keywords.nfields(); ++i) {
    if (keywords.type(i) != casacore::TpTable) continue;
    const std::string name = keywords.name(i);
    const std::string dir = keywords.tableAttributes(i).name();
    std::error_code ec;
    if (!fs::exists(dir + "/table.dat", ec))
      throw MsError(Kind::kMissingSubtable,
                    quoted(path) + " lacks its " + name + " subtable (" + dir +
                        (fs::is_directory(dir, ec) ? " holds no table.dat" : " does not exist") +
                        "): the MS is incomplete; copy it again whole (an MS is a folder of tables) or restore " +
                        name + " from the original");
    check_data_managers(path, dir, name);
    try {
      casacore::Table sub(dir, casacore::Table::Old);
    } catch (const casacore::AipsError& e) {
      throw MsError(Kind::kMissingSubtable, quoted(path) + ": its " + name + " subtable cannot be opened (" +
                                                one_line(e.what()) + "); restore it from the original MS");
    }
  }
  throw MsError(Kind::kNotMs, quoted(path) + " is a casacore table but not a MeasurementSet (" + one_line(error.what()) +
                                  "): give the MeasurementSet's own folder, not one of its subtables");
}

}  // namespace

casacore::MeasurementSet open_measurement_set(const std::string& path) {
  check_folder(path);
  check_not_locked(path);
  try {
    return casacore::MeasurementSet(path, casacore::Table::Old);
  } catch (const casacore::AipsError& e) {
    explain(path, e);
  }
}

}  // namespace gpuclean::io::ms

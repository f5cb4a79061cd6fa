#include "app/batch/manifest.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>

#include "app/cli.hpp"
#include "app/cube/cube_run.hpp"
#include "app/pipeline.hpp"
#include "clean/errors.hpp"
#include "io/fits_error.hpp"
#include "io/wsclean_channels.hpp"

namespace gpuclean::app {
namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One CSV/TSV record; quotes only in CSV.
std::vector<std::string> split_record(const std::string& line, char delimiter, const std::string& where) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"' && delimiter == ',' && trim(cell).empty()) {
      quoted = was_quoted = true;
      cell.clear();
    } else if (c == delimiter) {
      cells.push_back(was_quoted ? cell : trim(cell));
      cell.clear();
      was_quoted = false;
    } else {
      cell += c;
    }
  }
  if (quoted) throw clean::InvalidSettings(where + ": a quoted field is not closed; close it with \".");
  cells.push_back(was_quoted ? cell : trim(cell));
  return cells;
}

bool is_path_column(const std::string& c) {
  static const char* const paths[] = {"dirty", "psf", "out", "fits-mask", "model", "residual",
                                      "components", "json", "quicklook", "compare-prefix", "noise-map"};
  return std::find(std::begin(paths), std::end(paths), c) != std::end(paths);
}

std::string resolve(const fs::path& base, const std::string& p) {
  if (p.empty() || p == "-" || fs::path(p).is_absolute()) return p;
  return (base / p).lexically_normal().string();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string stem_name(const std::string& restored) {
  std::string n = fs::path(restored).filename().string();
  for (const char* e : {".fits", ".fit", ".fts"})
    if (ends_with(n, e)) n.resize(n.size() - std::string(e).size());
  if (ends_with(n, "-image")) n.resize(n.size() - 6);
  return n;
}

// The options of one row: the batch defaults, then the row's cells through the same parser
// as the single command.
RunOptions row_options(const BatchOptions& batch, const std::vector<std::string>& columns,
                       const std::vector<std::string>& cells, const fs::path& base, const std::string& where) {
  RunOptions r = batch.defaults;
  CLI::App app;
  add_observation_options(app, r);
  add_output_file_options(app, r);
  refuse_negative_counts(app);
  std::vector<std::string> args;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string& col = columns[i];
    std::string value = cells[i];
    if (col == "dirty" || col == "psf" || col == "out" || col == "name") continue;
    const CLI::Option* opt = app.get_option_no_throw("--" + col);
    if (!opt) {
      std::string valid;
      for (const CLI::Option* o : app.get_options()) {
        if (o->get_lnames().empty() || o->get_lnames()[0] == "help") continue;
        valid += (valid.empty() ? "" : ", ") + o->get_lnames()[0];
      }
      throw clean::InvalidSettings(where + ": column '" + col + "' is not an option of gpuclean; columns are dirty, "
                                   "psf, out, name and: " + valid + ".");
    }
    if (opt->get_expected_max() == 0) {  // a flag
      const std::string v = lower(value);
      if (v == "1" || v == "true" || v == "yes" || v == "y" || v == "on") {
        args.push_back("--" + col);
      } else if (!(v.empty() || v == "0" || v == "false" || v == "no" || v == "n" || v == "off")) {
        throw clean::InvalidSettings(where + ": column '" + col + "' is a flag; give true or false, not '" + value + "'.");
      }
      continue;
    }
    if (value.empty()) continue;
    if (is_path_column(col)) value = resolve(base, value);
    args.push_back("--" + col);
    if (opt->get_expected_max() > 1) {
      std::istringstream words(value);
      for (std::string w; words >> w;) args.push_back(w);
    } else {
      args.push_back(value);
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw clean::InvalidSettings(where + ": " + e.what());
  }
  try {
    clean::validate(r.settings);
  } catch (const clean::InvalidSettings& e) {
    throw clean::InvalidSettings(where + ": " + e.what());
  }
  if (r.json == "-") throw clean::InvalidSettings(where + ": --json - (stdout) cannot be used in batch mode; name a file.");
  return r;
}

void complete_outputs(RunOptions& r, const BatchOptions& batch) {
  const DerivedOutputs d = derived_outputs(r.output);
  if (r.model.empty()) r.model = d.model;
  if (r.residual.empty()) r.residual = d.residual;
  if (batch.quicklook && r.quicklook.empty()) r.quicklook = d.quicklook;
  // Batch mode prints its own progress; each run's log keeps only its warnings.
  r.verbosity = batch.defaults.verbosity == Verbosity::kQuiet ? Verbosity::kQuiet : Verbosity::kWarnings;
}

std::vector<BatchJob> jobs_from_table(const BatchOptions& batch) {
  std::ifstream in(batch.manifest, std::ios::binary);
  if (!in) throw clean::InvalidSettings("cannot read the manifest '" + batch.manifest + "'; give a CSV/TSV file or a folder.");
  std::stringstream text;
  text << in.rdbuf();
  const ManifestTable t = parse_manifest(text.str(), batch.manifest);
  const fs::path base = fs::path(batch.manifest).parent_path();
  auto column = [&](const char* name) {
    const auto it = std::find(t.columns.begin(), t.columns.end(), name);
    return it == t.columns.end() ? t.columns.size() : static_cast<std::size_t>(it - t.columns.begin());
  };
  for (const char* required : {"dirty", "psf", "out"}) {
    if (column(required) == t.columns.size())
      throw clean::InvalidSettings("the manifest '" + batch.manifest + "' has no '" + required +
                                   "' column; its header must name dirty, psf and out.");
  }
  std::vector<BatchJob> jobs;
  for (const auto& row : t.rows) {
    const std::string where = batch.manifest + " line " + std::to_string(row.line);
    BatchJob job;
    job.line = row.line;
    job.options = row_options(batch, t.columns, row.cells, base, where);
    job.options.dirty = resolve(base, row.cells[column("dirty")]);
    job.options.psf = resolve(base, row.cells[column("psf")]);
    job.options.output = resolve(base, row.cells[column("out")]);
    if (job.options.dirty.empty() || job.options.psf.empty() || job.options.output.empty())
      throw clean::InvalidSettings(where + ": dirty, psf and out must all be given.");
    complete_outputs(job.options, batch);
    const std::size_t name_col = column("name");
    job.name = name_col < t.columns.size() && !row.cells[name_col].empty() ? row.cells[name_col]
                                                                             : stem_name(job.options.output);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<BatchJob> jobs_from_folder(const BatchOptions& batch) {
  const fs::path dir = batch.manifest;
  const fs::path out_dir = batch.out_dir.empty() ? dir : fs::path(batch.out_dir);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string f = entry.path().filename().string();
    if (entry.is_regular_file() && ends_with(f, "-dirty.fits") && f.size() > 11 && !io::is_wsclean_set_member(entry.path().string()))
      names.push_back(f.substr(0, f.size() - 11));
  }
  std::sort(names.begin(), names.end());
  const RunOptions defaults = row_options(batch, {}, {}, dir, batch.manifest);
  std::vector<BatchJob> jobs;
  for (const std::string& name : names) {
    BatchJob job;
    job.name = name;
    job.options = defaults;
    job.options.dirty = (dir / (name + "-dirty.fits")).string();
    job.options.psf = (dir / (name + "-psf.fits")).string();
    job.options.output = (out_dir / (name + "-image.fits")).string();
    job.options.model = (out_dir / (name + "-model.fits")).string();
    job.options.residual = (out_dir / (name + "-residual.fits")).string();
    complete_outputs(job.options, batch);
    if (!fs::exists(job.options.psf))
      job.error = "no PSF '" + job.options.psf + "' beside '" + job.options.dirty +
                  "'; WSClean writes it with -make-psf (or give a manifest that names the PSF).";
    jobs.push_back(std::move(job));
  }
  // WSClean channel sets (NAME-0000-dirty.fits ...): one observation each, cleaned as the cube
  // command cleans them (cube_run.hpp), writing OUT-0000-image.fits ... and OUT-MFS-*.
  for (const io::WscleanChannelSet& set : io::find_wsclean_sets(dir.string())) {
    BatchJob job;
    job.name = fs::path(set.prefix).filename().string();
    job.options = defaults;
    job.options.cube.wsclean_channels = true;
    job.options.dirty = set.prefix;
    job.options.output = (out_dir / job.name).string();
    if (batch.save_source_list) job.options.cube.source_list = (out_dir / (job.name + "-sources.txt")).string();
    job.options.verbosity =
        batch.defaults.verbosity == Verbosity::kQuiet ? Verbosity::kQuiet : Verbosity::kWarnings;
    jobs.push_back(std::move(job));
  }
  // A cube option with nothing to take it is a mistake in the command, not a no-op.
  const bool any_set =
      std::any_of(jobs.begin(), jobs.end(), [](const BatchJob& j) { return j.options.cube.wsclean_channels; });
  if (const std::string option = given_cube_option(batch); !option.empty() && !any_set && !jobs.empty())
    throw clean::InvalidSettings(option + " applies to WSClean channel sets (NAME-0000-dirty.fits ...), and the "
                                 "folder '" + batch.manifest + "' holds none; leave it out.");
  std::sort(jobs.begin(), jobs.end(), [](const BatchJob& a, const BatchJob& b) { return a.name < b.name; });
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].index = i;
  if (jobs.empty())
    throw clean::InvalidSettings("the folder '" + batch.manifest + "' holds no NAME-dirty.fits; give a folder of "
                                 "WSClean images or a CSV/TSV manifest.");
  return jobs;
}

}  // namespace

std::string given_cube_option(const BatchOptions& batch) {
  const clean::CleanSettings& c = batch.defaults.settings;
  if (c.join_channels) return "--join-channels";
  if (c.join_polarizations) return "--join-polarizations";
  if (c.fit_spectral_pol > 0) return "--fit-spectral-pol";
  if (c.fit_spectral_log_pol > 0) return "--fit-spectral-log-pol";
  if (batch.save_source_list) return "--save-source-list";
  return {};
}

void check_cube_options(const BatchOptions& batch) {
  const std::string given = given_cube_option(batch);
  if (given.empty()) return;
  std::error_code ec;
  if (fs::exists(batch.manifest, ec) && !fs::is_directory(batch.manifest, ec))
    throw clean::InvalidSettings(given + " applies to the WSClean channel sets of a folder; a manifest's rows are "
                                 "single images. Give the folder, or leave " + given + " out.");
  RunOptions r = batch.defaults;
  r.cube.wsclean_channels = true;
  if (batch.save_source_list) r.cube.source_list = "OUT-sources.txt";
  validate_cube_options(r);
}

DerivedOutputs derived_outputs(const std::string& restored) {
  std::string stem = restored;
  for (const char* e : {".fits", ".fit", ".fts"})
    if (ends_with(stem, e)) {
      stem.resize(stem.size() - std::string(e).size());
      break;
    }
  DerivedOutputs d;
  d.quicklook = stem + ".png";
  if (ends_with(stem, "-image")) stem.resize(stem.size() - 6);
  d.model = stem + "-model.fits";
  d.residual = stem + "-residual.fits";
  return d;
}

ManifestTable parse_manifest(const std::string& text, const std::string& source) {
  ManifestTable t;
  std::istringstream in(text);
  std::string line;
  std::size_t number = 0;
  char delimiter = ',';
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 byte-order mark
    const std::string stripped = trim(line);
    if (stripped.empty() || stripped[0] == '#') continue;
    const std::string where = source + " line " + std::to_string(number);
    if (t.columns.empty()) {
      delimiter = line.find('\t') != std::string::npos ? '\t' : ',';
      for (std::string c : split_record(line, delimiter, where)) {
        c = lower(trim(c));
        while (!c.empty() && c[0] == '-') c.erase(0, 1);
        std::replace(c.begin(), c.end(), '_', '-');
        if (c.empty()) throw clean::InvalidSettings(where + ": the header has an empty column name.");
        if (std::find(t.columns.begin(), t.columns.end(), c) != t.columns.end())
          throw clean::InvalidSettings(where + ": column '" + c + "' appears twice in the header.");
        t.columns.push_back(c);
      }
      continue;
    }
    ManifestTable::Row row;
    row.line = number;
    row.cells = split_record(line, delimiter, where);
    if (row.cells.size() != t.columns.size())
      throw clean::InvalidSettings(where + ": " + std::to_string(row.cells.size()) + " fields, but the header names " +
                                   std::to_string(t.columns.size()) + " columns.");
    t.rows.push_back(std::move(row));
  }
  if (t.columns.empty()) throw clean::InvalidSettings("the manifest '" + source + "' is empty; it needs a header row dirty,psf,out.");
  return t;
}

std::vector<BatchJob> load_jobs(const BatchOptions& batch) {
  std::error_code ec;
  if (!fs::exists(batch.manifest, ec))
    throw clean::InvalidSettings("the manifest '" + batch.manifest + "' does not exist; give a CSV/TSV file or a folder.");
  std::vector<BatchJob> jobs = fs::is_directory(batch.manifest) ? jobs_from_folder(batch) : jobs_from_table(batch);
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].index = i;
  // No two observations may write one file, and none may write over an input.
  std::map<std::string, std::string> writer;
  std::map<std::string, std::string> inputs;
  std::vector<std::vector<std::string>> outputs(jobs.size());
  for (auto& j : jobs) {
    for (const auto* p : {&j.options.dirty, &j.options.psf, &j.options.fits_mask})
      if (!p->empty()) inputs[fs::path(*p).lexically_normal().string()] = j.name;
    if (!j.options.cube.wsclean_channels) {
      outputs[j.index] = output_paths(j.options);
      continue;
    }
    // A channel set's inputs are its files; one with a file missing fails as its own job.
    try {
      const io::WscleanChannelSet set = io::find_wsclean_channels(j.options.dirty);
      for (const auto& row : set.dirty)
        for (const auto& f : row) inputs[fs::path(f).lexically_normal().string()] = j.name;
      for (const auto& f : set.psf) inputs[fs::path(f).lexically_normal().string()] = j.name;
      outputs[j.index] = cube_outputs(j.options);
    } catch (const io::FitsError& e) {
      if (j.error.empty()) j.error = e.what();
    }
  }
  for (const auto& j : jobs) {
    if (!j.error.empty()) continue;
    for (const std::string& out : outputs[j.index]) {
      const std::string key = fs::path(out).lexically_normal().string();
      const auto [it, fresh] = writer.emplace(key, j.name);
      if (!fresh)
        throw clean::InvalidSettings("observations '" + it->second + "' and '" + j.name + "' would both write '" + out +
                                     "'; give each its own output names.");
      if (inputs.count(key))
        throw clean::InvalidSettings("observation '" + j.name + "' would write '" + out + "', an input of '" +
                                     inputs[key] + "'; outputs never replace inputs.");
    }
  }
  return jobs;
}

}  // namespace gpuclean::app

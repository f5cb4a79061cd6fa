#pragma once
// What a batch deconvolves: rows of a CSV/TSV manifest, or the WSClean-named pairs of a folder,
// each turned into the options of one single-command run.
//
// Manifest: a header row naming the columns, then one row per observation; '#' lines and blank
// lines are skipped; tab-separated when the header holds a tab, else comma-separated with
// "double quotes" where a field holds a comma. Columns dirty, psf and out are required; name is
// optional; every other column is an option of the single command by its long name (gain,
// niter, auto-threshold, fits-mask, model, ...), whose cell overrides the batch's default for
// that row (an empty cell keeps it; a flag column takes true/false). Relative paths are taken
// from the manifest's folder.

#include <string>
#include <vector>

#include "app/batch/batch_options.hpp"

namespace gpuclean::app {

struct BatchJob {
  std::string name;      ///< for progress lines and the report
  std::size_t index = 0; ///< position in the manifest (or in name order for a folder), 0-based
  std::size_t line = 0;  ///< manifest line (0 in folder mode)
  RunOptions options;
  std::string error;     ///< set when the observation cannot run at all (reported as failed)
};

/// A parsed CSV/TSV table: lower-case column names, then rows with their line numbers.
struct ManifestTable {
  std::vector<std::string> columns;
  struct Row {
    std::size_t line = 0;
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
};

/// Parses manifest text. Throws clean::InvalidSettings naming `source` and the line on errors.
ManifestTable parse_manifest(const std::string& text, const std::string& source);

/// Every observation of options.manifest (file or folder), in manifest (or name) order, with the
/// batch defaults and row options applied. Throws clean::InvalidSettings for a bad manifest
/// (unknown column, bad value, two observations writing one file) before any work starts.
std::vector<BatchJob> load_jobs(const BatchOptions& options);

/// The first cube option the batch was given (--join-channels, ...), or "" when none.
std::string given_cube_option(const BatchOptions& batch);

/// The cube options (--join-channels, --fit-spectral-pol, --save-source-list, ...) apply to the
/// WSClean channel sets of a folder: refused with a manifest, and checked against each other as
/// the single command checks them. Throws clean::InvalidSettings before any work.
void check_cube_options(const BatchOptions& batch);

/// Outputs derived from the restored image's name: X-image.fits gives X-model.fits,
/// X-residual.fits and X-image.png (WSClean's names); any other X.fits gives X-model.fits,
/// X-residual.fits and X.png.
struct DerivedOutputs {
  std::string model, residual, quicklook;
};
DerivedOutputs derived_outputs(const std::string& restored);

}  // namespace gpuclean::app

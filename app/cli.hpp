#pragma once
// Command-line definitions (CLI11). Parsing fills plain option structs; main() runs them.

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "app/bench/bench_batch.hpp"
#include "app/bench/bench_clean.hpp"
#include "app/bench/bench_gridder.hpp"
#include "app/bench/bench_io.hpp"
#include "app/bench/bench_select.hpp"
#include "app/batch/batch_options.hpp"
#include "app/quicklook_panels.hpp"
#include "app/run_options.hpp"
#include "data/simulate_channels.hpp"

namespace gpuclean::app {

struct SimulateOptions {
  data::SimulationSettings settings;
  data::ChannelSettings channels;  ///< --channels above 1: a WSClean-style channel set
  std::string name = "sim";        ///< the channel set's file-name prefix
  std::string out_dir;
  bool overwrite = false;
  std::string command_line;
};

struct Cli {
  std::unique_ptr<CLI::App> app;
  CLI::App* simulate = nullptr;
  CLI::App* batch = nullptr;
  BatchOptions batch_options;
  CLI::App* bench = nullptr;
  CLI::App* bench_select = nullptr;
  BenchSelectOptions bench_select_options;
  CLI::App* bench_batch = nullptr;
  BenchBatchOptions bench_batch_options;
  CLI::App* bench_clean = nullptr;
  BenchCleanOptions bench_clean_options;
  CLI::App* bench_gridder = nullptr;
  BenchGridderOptions bench_gridder_options;
  CLI::App* bench_io = nullptr;
  BenchIoOptions bench_io_options;
  CLI::App* quicklook = nullptr;
  QuicklookPanelsOptions quicklook_options;
  RunOptions run;
  SimulateOptions sim;
};

/// Builds the parser; the options write into the returned structs.
std::unique_ptr<Cli> make_cli();

/// Options that shape one observation's run (loop, algorithm, masks, beam, ...): the single
/// command's, batch mode's defaults, and a manifest's columns; made from the option table's rows
/// (app/options/option_row.hpp).
void add_observation_options(CLI::App& app, RunOptions& r);
/// Every unsigned option of `app` and its subcommands refuses a negative value (exit code 2)
/// instead of wrapping it to a huge count. make_cli() applies it; so must any other parser.
void refuse_negative_counts(CLI::App& app);
/// How a cube or WSClean channel set is cleaned (--join-channels, --fit-spectral-pol, ...): the
/// single command's and batch's. The single command adds --wsclean-channels and
/// --save-source-list FILE; batch, --save-source-list as a flag (one list per channel set).
void add_cube_options(CLI::App& app, RunOptions& r);
/// Per-observation output files (--model, --residual, --components, --json, --quicklook, ...).
void add_output_file_options(CLI::App& app, RunOptions& r);

}  // namespace gpuclean::app

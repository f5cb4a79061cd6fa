#pragma once
// The batch command's options: the manifest, how to split and schedule it, and the defaults of
// every observation's run (a manifest's columns override them row by row).

#include <cstddef>
#include <string>

#include "app/run_options.hpp"

namespace gpuclean::app {

struct BatchOptions {
  std::string manifest;   ///< CSV/TSV file or folder
  std::string out_dir;    ///< folder mode: where outputs go (default: the input folder)
  bool resume = false;
  std::string shard;      ///< "I/N"; empty: from Slurm / MPI environment, else all
  std::string report;     ///< JSON report path (default in the output folder)
  int io_threads = 0;        ///< readers and writers each; 0: automatic
  std::size_t max_gpus = 0;
  int streams_per_gpu = 0;   ///< clean workers per GPU; 0: automatic
  int queue_depth = 2;
  bool quicklook = false;
  bool save_source_list = false;  ///< each channel set's source list, NAME-sources.txt
  RunOptions defaults;
  std::string command_line;
};

/// Runs the batch; returns the process exit code (0: every observation done or skipped).
int run_batch(const BatchOptions& options);

}  // namespace gpuclean::app

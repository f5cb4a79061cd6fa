#pragma once
// `gpuclean bench batch`: does batch mode hide its I/O? Simulated observations are cleaned
// (a) by the clean stage alone, from images already in memory, one after another on one
// deconvolver, and (b) by `gpuclean batch` as a child process, FITS in and out; (b)'s
// throughput over (a)'s is the share of the GPU stage's speed that the whole batch keeps. The
// batch is run at several lengths to show its peak host memory does not grow with it.

#include <cstddef>
#include <string>
#include <vector>

namespace gpuclean::app {

struct BenchBatchOptions {
  std::size_t size = 2048;
  std::vector<std::size_t> counts = {64, 256};  ///< batch lengths
  std::size_t distinct = 8;                     ///< simulated fields, reused round-robin
  std::size_t sources = 300;
  std::string dir;                              ///< scratch folder (default: a temporary one, removed)
  std::vector<std::string> batch_args;          ///< extra options for the batch runs
};

int run_bench_batch(const BenchBatchOptions& options);

}  // namespace gpuclean::app

#pragma once
// `gpuclean bench batch`: how fast does batch mode go, and what bounds it? Simulated
// observations are cleaned (a) by the clean stage alone, from images already in memory, one
// after another on one deconvolver (one stream), and (b) by `gpuclean batch` as a child
// process, FITS in and out, with one stream per GPU and with the automatic number; (b)'s
// throughput over (a)'s is what batching and concurrent streams gain. (c) The disk's own rate
// for those outputs: as many FITS images of that size written by the same writer with as many
// threads, no CLEAN, which bounds any batch. The batch is run at several lengths to show its
// peak host memory does not grow with it.

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
  double target = 20.0;                         ///< observations/s the batch should reach (or the disk's rate)
  /// The first length is also run with every pair of these streams per GPU and I/O threads (an
  /// empty list: the automatic choice), to find what keeps the GPU busy; and the clean stage
  /// alone on each of these numbers of workers (a deconvolver each, no files).
  std::vector<std::size_t> sweep_streams, sweep_io;
  std::vector<std::size_t> sweep_gpus;  ///< --gpus: every length again on this many GPUs each
};

int run_bench_batch(const BenchBatchOptions& options);

}  // namespace gpuclean::app

#pragma once
// `gpuclean bench io`: a channel set's host I/O. N float planes of size² are written (staged and
// committed, as the drivers write outputs) and read back by 1, 2, ... threads, through the raw
// path and, with --cfitsio, the CFITSIO path as before issue 37; the same bytes are written and
// read with plain write()/read() in the same run, the page cache's own rate, to compare with.

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gpuclean::app {

struct BenchIoOptions {
  std::size_t planes = 32;
  std::size_t size = 1024;
  std::vector<std::size_t> threads;  ///< empty: 1 and every core
  std::string dir;                   ///< scratch folder, kept (default: a temporary one, removed)
  bool cfitsio = false;              ///< also the CFITSIO path (reads, writes, an fsync per file)
  bool cold = false;                 ///< drop the files' cached pages before each read (posix_fadvise)
  std::size_t repeats = 5;           ///< timed runs per row; the median is shown
};

void add_bench_io_options(CLI::App& sub, BenchIoOptions& o);

/// Returns 0, or 4 when a file read back differs from what was written.
int run_bench_io(const BenchIoOptions& options);

}  // namespace gpuclean::app

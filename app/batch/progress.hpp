#pragma once
// Batch progress: on a terminal, one bar redrawn in place with counts, rate and ETA (failures
// print above it); otherwise (a log file, a Slurm job) one plain line per observation.

#include <chrono>
#include <cstdio>
#include <mutex>

#include "app/batch/outcome.hpp"
#include "app/run_options.hpp"

namespace gpuclean::app {

class Progress {
 public:
  /// `bar`: redraw a bar on `out` (a terminal); else plain lines on `out`.
  Progress(std::size_t total, bool bar, Verbosity verbosity, std::FILE* out = stdout);
  /// Thread-safe.
  void record(const ObservationOutcome& o);
  /// Clears the bar.
  void finish();

  /// "1:02:03" or "2:03".
  static std::string clock(double seconds);
  /// The bar line, for tests: e.g. "[#####-----]  32/64  1 failed  2.1 obs/s  ETA 0:15".
  std::string bar_line() const;

 private:
  void draw();
  std::mutex mutex_;
  std::size_t total_, done_ = 0, failed_ = 0, skipped_ = 0;
  bool bar_;
  Verbosity verbosity_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gpuclean::app

#pragma once
// The end of a batch: a summary table on the terminal and a JSON report (the summary schema's
// batch front end, docs/summary-json.md) with one entry per observation (status, seconds, and
// when done its settings, runs and planes) and the totals.

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/batch/outcome.hpp"
#include "app/batch/shard.hpp"

namespace gpuclean::app {

struct BatchTotals {
  std::size_t observations = 0, done = 0, failed = 0, skipped = 0;
  double wall_seconds = 0;
  double observations_per_second = 0;  ///< observations run (done + failed) per wall second
  double gpu_stage_seconds = 0;        ///< summed over workers: time spent in the clean stage
  std::size_t workers = 0;
  std::vector<std::string> devices;    ///< one per worker
  std::size_t streams_per_gpu = 0;     ///< clean workers per GPU (0: the CPU worker)
  std::size_t io_threads = 0;          ///< reader threads, and as many writer threads
  double stage_busy_fraction = 0;      ///< gpu_stage_seconds / (wall x workers)
  long peak_host_memory_kib = 0;       ///< VmHWM of this process
};

BatchTotals summarize(const std::vector<ObservationOutcome>& outcomes, double wall_seconds,
                      double gpu_stage_seconds, std::vector<std::string> devices);

/// A channel set's outcome from its cube summary: the runs' components and most major cycles, the
/// first run's stop reason, the planes' RMS residual and mean model flux, the stage times.
void record_cube_summary(ObservationOutcome& outcome, nlohmann::json summary);

nlohmann::json batch_report_json(const std::vector<ObservationOutcome>& outcomes, const BatchTotals& totals,
                                 const Shard& shard, const std::string& manifest, const std::string& command_line);

void print_summary_table(std::FILE* out, const std::vector<ObservationOutcome>& outcomes, const BatchTotals& totals,
                         const Shard& shard);

/// Peak resident memory of this process (VmHWM, KiB); 0 when unknown.
long peak_resident_kib();

}  // namespace gpuclean::app

#include "app/batch/batch_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "app/summary/summary_json.hpp"

namespace gpuclean::app {

const char* to_string(OutcomeStatus s) {
  switch (s) {
    case OutcomeStatus::kDone: return "done";
    case OutcomeStatus::kFailed: return "failed";
    case OutcomeStatus::kSkipped: return "skipped";
  }
  return "?";
}

long peak_resident_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream words(line.substr(6));
      long kib = 0;
      words >> kib;
      return kib;
    }
  }
  return 0;
}

BatchTotals summarize(const std::vector<ObservationOutcome>& outcomes, double wall_seconds, double gpu_stage_seconds,
                      std::vector<std::string> devices) {
  BatchTotals t;
  t.observations = outcomes.size();
  for (const auto& o : outcomes) {
    t.done += o.status == OutcomeStatus::kDone;
    t.failed += o.status == OutcomeStatus::kFailed;
    t.skipped += o.status == OutcomeStatus::kSkipped;
  }
  t.wall_seconds = wall_seconds;
  t.observations_per_second = wall_seconds > 0 ? static_cast<double>(t.done + t.failed) / wall_seconds : 0.0;
  t.gpu_stage_seconds = gpu_stage_seconds;
  t.workers = devices.size();
  t.devices = std::move(devices);
  t.stage_busy_fraction =
      wall_seconds > 0 && t.workers ? gpu_stage_seconds / (wall_seconds * static_cast<double>(t.workers)) : 0.0;
  t.peak_host_memory_kib = peak_resident_kib();
  return t;
}

void record_cube_summary(ObservationOutcome& o, nlohmann::json summary) {
  const nlohmann::json& seconds = summary["seconds"];
  o.clean_seconds = seconds.value("clean", 0.0);
  o.read_seconds = seconds.value("read", 0.0);
  o.write_seconds = seconds.value("write", 0.0);
  o.mode = summary["settings"].value("join", "");
  const nlohmann::json& runs = summary["runs"];
  o.iterations = 0;
  for (const auto& r : runs) {
    o.iterations += r.value("iterations", std::size_t{0});
    o.major_cycles = std::max(o.major_cycles, r.value("major_cycles", std::size_t{0}));
  }
  o.stop_reason = runs.empty() ? "" : runs[0].value("stop_reason", "");
  double rms2 = 0.0, flux = 0.0;
  for (const auto& p : summary["planes"]) {
    rms2 += std::pow(p.value("rms_residual", 0.0), 2);
    flux += p.value("model_flux", 0.0);
  }
  const double planes = std::max<double>(1.0, static_cast<double>(summary["planes"].size()));
  o.rms_residual = std::sqrt(rms2 / planes);  // over all planes
  o.model_flux = flux / planes;               // the planes' mean
  o.summary = std::move(summary);
}

nlohmann::json batch_report_json(const std::vector<ObservationOutcome>& outcomes, const BatchTotals& t,
                                 const Shard& shard, const std::string& manifest, const std::string& command_line) {
  nlohmann::json j = summary_envelope("batch", command_line);
  j["manifest"] = manifest;
  j["shard"] = {{"index", shard.index}, {"count", shard.count}, {"source", shard.source}};
  // An observation's own summary keys that the entry replaces with the batch's view of them.
  static const char* const kBatchOwn[] = {"schema", "schema_version", "front_end", "gpuclean_version", "command",
                                          "dirty", "psf", "output", "device", "seconds"};
  nlohmann::json list = nlohmann::json::array();
  for (const auto& o : outcomes) {
    nlohmann::json e;
    if (o.status == OutcomeStatus::kDone && o.summary.is_object()) {
      e = o.summary;  // input, settings, image, runs, planes (and a channel set's keys)
      for (const char* k : kBatchOwn) e.erase(k);
    }
    e["index"] = o.index;
    e["name"] = o.name;
    e["status"] = to_string(o.status);
    e["reason"] = o.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.reason);
    if (o.status == OutcomeStatus::kFailed) e["exit_code"] = o.exit_code;
    e["dirty"] = o.dirty;
    e["psf"] = o.psf;
    e["outputs"] = o.outputs;
    if (o.status == OutcomeStatus::kDone) e["device"] = o.device;
    // From the start of its read to the end of its write (the stages overlap other observations').
    e["seconds"] = seconds_json(o.read_seconds, o.clean_seconds, o.restore_seconds, o.write_seconds);
    e["seconds"]["total"] = o.seconds;
    list.push_back(std::move(e));
  }
  j["observations"] = list;
  j["totals"] = {{"observations", t.observations},
                 {"done", t.done},
                 {"failed", t.failed},
                 {"skipped", t.skipped},
                 {"wall_seconds", t.wall_seconds},
                 {"observations_per_second", t.observations_per_second},
                 {"workers", t.devices},
                 {"streams_per_gpu", t.streams_per_gpu},
                 {"io_threads", t.io_threads},
                 {"clean_stage_seconds", t.gpu_stage_seconds},
                 {"clean_stage_busy_fraction", t.stage_busy_fraction},
                 {"peak_host_memory_kib", t.peak_host_memory_kib}};
  return j;
}

void print_summary_table(std::FILE* out, const std::vector<ObservationOutcome>& outcomes, const BatchTotals& t,
                         const Shard& shard) {
  std::size_t width = 11;
  for (const auto& o : outcomes) width = std::max(width, o.name.size());
  width = std::min<std::size_t>(width, 40);
  std::fprintf(out, "%-*s %-8s %-8s %10s %6s %12s %12s %8s\n", static_cast<int>(width), "observation", "status",
               "device", "components", "cycles", "RMS [Jy/bm]", "flux [Jy]", "seconds");
  for (const auto& o : outcomes) {
    if (o.status == OutcomeStatus::kDone) {
      std::fprintf(out, "%-*.*s %-8s %-8s %10zu %6zu %12.4e %12.5g %8.2f\n", static_cast<int>(width),
                   static_cast<int>(width), o.name.c_str(), "done", o.device.c_str(), o.iterations, o.major_cycles,
                   o.rms_residual, o.model_flux, o.seconds);
    } else {
      std::fprintf(out, "%-*.*s %-8s %s\n", static_cast<int>(width), static_cast<int>(width), o.name.c_str(),
                   to_string(o.status), o.reason.c_str());
    }
  }
  std::fprintf(out,
               "%zu observations%s: %zu done, %zu failed, %zu skipped in %.2f s (%.3f observations/s on %zu worker%s%s; "
               "clean stage busy %.0f%% of the time; peak host memory %.0f MiB)\n",
               t.observations,
               shard.count > 1 ? (" (shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) + ", " +
                                  shard.source + ")").c_str()
                               : "",
               t.done, t.failed, t.skipped, t.wall_seconds, t.observations_per_second, t.workers,
               t.workers == 1 ? "" : "s",
               t.streams_per_gpu > 1 ? (", " + std::to_string(t.streams_per_gpu) + " per GPU").c_str() : "",
               100.0 * t.stage_busy_fraction, t.peak_host_memory_kib / 1024.0);
}

}  // namespace gpuclean::app

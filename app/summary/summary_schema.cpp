#include "app/summary/summary_schema.hpp"

#include <initializer_list>

#include "app/summary/summary_json.hpp"

namespace gpuclean::app {
namespace {

using Keys = std::initializer_list<const char*>;

// The required keys of each block (optional ones are in docs/summary-json.md only).
const Keys kEnvelope = {"schema", "schema_version", "front_end", "gpuclean_version", "command"};
// A CLEAN of one input: the single command's and cube's summary, and a batch observation done.
const Keys kRunSummary = {"input", "settings", "image", "runs", "planes"};
const Keys kOwnRunSummary = {"dirty", "psf", "output", "device", "seconds"};  // not in a batch entry
const Keys kCube = {"channels", "stokes", "weights", "planes_per_second"};
const Keys kSettings = {"algorithm", "niter", "gain", "mgain", "threshold", "auto_threshold", "stopping_rules",
                        "auto_mask", "local_rms", "local_rms_window", "local_rms_method", "allow_negative",
                        "clean_border_percent", "select_k", "select", "beam_patch", "multiscale", "join",
                        "fit_spectral_pol", "fit_spectral_log_pol"};
const Keys kMultiscale = {"enabled", "shape", "scale_bias", "gain"};
const Keys kImage = {"width", "height"};
const Keys kRun = {"planes", "iterations", "major_cycles", "stop_reason", "threshold", "peak_residual",
                   "noise_sigma", "reference_frequency_hz", "gpu", "peak_gpu_memory_bytes", "scales",
                   "auto_mask", "local_rms", "minor_cycles_gpu", "stage_seconds"};
const Keys kStageSeconds = {"setup", "download", "scale_images", "noise_map", "select", "minor", "convolve", "restore"};
const Keys kPlane = {"index", "run", "rms_residual", "model_flux", "restored_peak", "beam"};
const Keys kCubePlane = {"channel", "stokes", "frequency_hz", "weight"};
const Keys kBeam = {"fitted", "bmaj_pixels", "bmin_pixels", "bmaj_arcsec", "bmin_arcsec", "bpa_deg"};
const Keys kSeconds = {"total", "read", "clean", "write"};
const Keys kBatch = {"manifest", "shard", "observations", "totals"};
const Keys kShard = {"index", "count", "source"};
const Keys kObservation = {"index", "name", "status", "reason", "dirty", "psf", "outputs", "seconds"};
const Keys kTotals = {"observations", "done", "failed", "skipped", "wall_seconds", "observations_per_second",
                      "workers", "streams_per_gpu", "io_threads", "clean_stage_seconds",
                      "clean_stage_busy_fraction", "peak_host_memory_kib"};

class Checker {
 public:
  /// False when `j` is not an object (then its keys are not checked).
  bool keys(const nlohmann::json& j, const std::string& where, Keys keys) {
    if (!j.is_object()) {
      problems.push_back(where + ": not an object");
      return false;
    }
    for (const char* k : keys)
      if (!j.contains(k)) problems.push_back(where + (where.empty() ? "" : ".") + k + ": missing");
    return true;
  }
  bool array(const nlohmann::json& j, const char* key, const std::string& where) {
    if (j.contains(key) && j[key].is_array()) return true;
    if (j.contains(key)) problems.push_back(where + (where.empty() ? "" : ".") + key + ": not an array");
    return false;
  }

  // input, settings, image, runs, planes (and a cube's keys); runs and planes must name each other.
  void run_summary(const nlohmann::json& j, const std::string& where, bool cube) {
    const std::string dot = where.empty() ? "" : where + ".";
    keys(j, where, kRunSummary);
    if (j.contains("settings") && keys(j["settings"], dot + "settings", kSettings) && j["settings"].contains("multiscale"))
      keys(j["settings"]["multiscale"], dot + "settings.multiscale", kMultiscale);
    if (j.contains("image")) keys(j["image"], dot + "image", kImage);
    if (cube) keys(j, where, kCube);
    if (!array(j, "runs", where) || !array(j, "planes", where)) return;
    const nlohmann::json &runs = j["runs"], &planes = j["planes"];
    if (runs.empty()) problems.push_back(dot + "runs: empty");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::string at = dot + "runs[" + std::to_string(i) + "]";
      if (!keys(runs[i], at, kRun)) continue;
      if (runs[i].contains("stage_seconds")) keys(runs[i]["stage_seconds"], at + ".stage_seconds", kStageSeconds);
      if (!array(runs[i], "planes", at)) continue;
      for (const auto& p : runs[i]["planes"]) {
        if (!p.is_number_unsigned() || p.get<std::size_t>() >= planes.size() || planes[p.get<std::size_t>()].value("run", runs.size()) != i)
          problems.push_back(at + ".planes: " + p.dump() + " is not a plane of this run");
      }
    }
    for (std::size_t i = 0; i < planes.size(); ++i) {
      const std::string at = dot + "planes[" + std::to_string(i) + "]";
      if (!keys(planes[i], at, kPlane)) continue;
      if (cube) keys(planes[i], at, kCubePlane);
      if (planes[i].contains("beam")) keys(planes[i]["beam"], at + ".beam", kBeam);
      if (planes[i].value("index", planes.size()) != i) problems.push_back(at + ".index: not " + std::to_string(i));
      const std::size_t run = planes[i].value("run", runs.size());
      if (run >= runs.size()) problems.push_back(at + ".run: no such run");
    }
  }

  std::vector<std::string> problems;
};

}  // namespace

std::vector<std::string> summary_schema_problems(const nlohmann::json& j) {
  Checker c;
  if (!c.keys(j, "", kEnvelope)) return c.problems;
  if (j.value("schema", "") != kSummarySchema) c.problems.push_back("schema: not " + std::string(kSummarySchema));
  if (j.value("schema_version", 0) != kSummarySchemaVersion)
    c.problems.push_back("schema_version: not " + std::to_string(kSummarySchemaVersion));
  const std::string front_end = j.value("front_end", "");
  if (front_end == "clean" || front_end == "cube") {
    c.keys(j, "", kOwnRunSummary);
    if (j.contains("seconds")) c.keys(j["seconds"], "seconds", kSeconds);
    if ((front_end == "clean") != (j.value("input", "") == "image"))
      c.problems.push_back("input: " + j.value("input", std::string("?")) + " is not a " + front_end + " input");
    c.run_summary(j, "", front_end == "cube");
  } else if (front_end == "image") {  // gpuclean image -niter N: a run per group of output channels, its planes
    c.keys(j, "", {"ms", "device", "major_cycles", "totals", "outputs", "model_data", "seconds"});
    if (j.value("input", "") != "ms") c.problems.push_back("input: not ms");
    c.run_summary(j, "", false);
  } else if (front_end == "batch") {
    c.keys(j, "", kBatch);
    if (j.contains("shard")) c.keys(j["shard"], "shard", kShard);
    if (j.contains("totals")) c.keys(j["totals"], "totals", kTotals);
    if (c.array(j, "observations", "")) {
      for (std::size_t i = 0; i < j["observations"].size(); ++i) {
        const nlohmann::json& o = j["observations"][i];
        const std::string at = "observations[" + std::to_string(i) + "]";
        if (!c.keys(o, at, kObservation)) continue;
        if (o.contains("seconds")) c.keys(o["seconds"], at + ".seconds", kSeconds);
        if (o.value("status", "") != "done") continue;
        c.keys(o, at, {"device"});
        c.run_summary(o, at, o.value("input", "") != "image");
      }
    }
  } else {
    c.problems.push_back("front_end: unknown \"" + front_end + "\"");
  }
  return c.problems;
}

}  // namespace gpuclean::app

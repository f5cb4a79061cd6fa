#include "app/image/clean_summary.hpp"

#include <cmath>

namespace gpuclean::app {

nlohmann::json image_summary_json(const ImageCleanRecord& r) {
  const ImageOptions& o = *r.options;
  nlohmann::json j = summary_envelope("image", r.command_line);
  j["input"] = "ms";
  j["ms"] = o.ms;
  j["name"] = o.name;
  j["device"] = o.run.device == clean::Device::kGpu ? "gpu" : "cpu";
  if (o.run.device == clean::Device::kGpu) j["gpus"] = o.run.gpus;  // -max-gpus: the GPUs used
  // The loop's settings: -niter over all major cycles and -mgain per round (the session's own
  // mgain stays 1), and -nmiter.
  clean::CleanSettings settings = o.deconvolution.settings;
  settings.niter = o.deconvolution.niter;
  settings.mgain = o.deconvolution.mgain;
  j["settings"] = settings_json(settings);
  j["settings"]["nmiter"] = o.deconvolution.nmiter;
  j["settings"]["update_model_required"] = o.deconvolution.update_model_required;
  j["image"] = {{"width", o.run.image.width},
                {"height", o.run.image.height},
                {"scale_arcsec", o.run.image.scale * 180 / M_PI * 3600},
                {"channels_out", o.run.channels_out}};
  nlohmann::json planes = nlohmann::json::array();
  for (const ImagePlaneSummary& p : r.planes) {
    nlohmann::json e = plane_json(p.plane);
    e["frequency_hz"] = p.frequency_hz;
    e["weight"] = p.weight;
    planes.push_back(std::move(e));
  }
  nlohmann::json runs = nlohmann::json::array(), cycles = nlohmann::json::array();
  std::size_t major_cycles = 0, iterations = 0, predictions = 0;
  std::string stop_reason;
  double deconvolve = 0, predict = 0, invert = 0;
  for (std::size_t i = 0; i < r.runs->size(); ++i) {
    const ImageCleanRun& run = (*r.runs)[i];
    const MajorCycleReport& report = run.report;
    clean::CleanSettings run_settings = run.settings;
    run_settings.niter = o.deconvolution.niter, run_settings.mgain = o.deconvolution.mgain;
    nlohmann::json e = run_json(run.result, run_settings, run.channels, std::nullopt);
    const std::string stop(to_string(report.stop));
    e["loop"] = {{"major_cycles", report.cycles.size()},
                 {"iterations", report.iterations},
                 {"predictions", report.predictions},
                 {"stop_reason", stop},
                 {"theoretical_beam_pixels", run.settings.multiscale.beam_pixels}};
    runs.push_back(std::move(e));
    for (const MajorCycleStep& s : report.cycles) {
      cycles.push_back({{"run", i},
                        {"index", s.index},
                        {"budget", s.budget},
                        {"components", s.round.components},
                        {"peak", s.round.peak},
                        {"peak_left", s.round.peak_left},
                        {"threshold", s.round.threshold},
                        {"noise_sigma", s.round.noise_sigma},
                        {"stop_reason", std::string(clean::to_string(s.round.reason))},
                        {"round_floor", s.round.round_floor},
                        {"predicted", s.predicted},
                        {"peak_reimaged", s.peak_reimaged},
                        {"more", s.more},
                        {"seconds",
                         {{"deconvolve", s.deconvolve_s}, {"predict", s.predict_s}, {"invert", s.invert_s}}}});
      deconvolve += s.deconvolve_s, predict += s.predict_s, invert += s.invert_s;
    }
    major_cycles += report.cycles.size(), iterations += report.iterations, predictions += report.predictions;
    stop_reason = i == 0 || stop_reason == stop ? stop : "mixed";
  }
  j["runs"] = std::move(runs);
  j["planes"] = std::move(planes);
  j["major_cycles"] = std::move(cycles);
  j["totals"] = {{"major_cycles", major_cycles},
                 {"iterations", iterations},
                 {"predictions", predictions},
                 {"stop_reason", stop_reason},
                 {"seconds", {{"deconvolve", deconvolve}, {"predict", predict}, {"invert", invert}}}};
  j["outputs"] = r.outputs;
  j["model_data"] = {{"written", r.model_data}, {"rows", r.model_data_rows}};
  const ImageCleanSeconds& t = r.seconds;
  j["seconds"] = {{"total", t.first_inversion + t.loop + t.restore + t.write + t.model_data},
                  {"first_inversion", t.first_inversion},
                  {"loop", t.loop},
                  {"restore", t.restore},
                  {"write", t.write},
                  {"model_data", t.model_data}};
  return j;
}

}  // namespace gpuclean::app

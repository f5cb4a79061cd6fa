// The single-observation command: the pipeline's three stages in a row.

#include <chrono>

#include "app/log.hpp"
#include "app/pipeline.hpp"
#include "app/run_options.hpp"

namespace gpuclean::app {

RunOutcome run_observation(const RunOptions& o, const std::function<LoadedObservation(const Log&)>& load) {
  const auto t_start = std::chrono::steady_clock::now();
  clean::validate(o.settings);
  const Log log(o.verbosity, o.json == "-");
  const bool writes = !o.output.empty();
  if (writes) check_outputs(o);
  const clean::Device resolved = resolve_device(o.settings.device, log);  // before any work

  LoadedObservation obs = load(log);
  const clean::RunPlan plan = plan_observation(obs, resolved, log);
  const clean::Device device = plan.device;
  host_dirty_for_cpu(obs, device);
  clean::DeconvolverPool deconvolver;
  RunOutcome outcome{clean_observation(obs, plan, deconvolver, log), {}};
  const clean::CleanResult& result = outcome.result;
  if (writes) {
    write_observation(obs, result, log);
  } else {
    summarize_observation(obs, result);
  }

  RunReport& r = obs.report;
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (r.seconds.total == 0) r.seconds.total = r.seconds.read + r.seconds.clean + r.seconds.restore + r.seconds.write;
  log.info("done: %zu components in %zu major cycles, stopped on %s; peak residual %.4e Jy/beam, "
           "residual RMS %.4e Jy/beam, model flux %.5g Jy; %.2f s (read %.2f, clean %.2f, restore %.2f, write %.2f)",
           result.stop.iterations, result.stop.major_cycles, std::string(clean::to_string(result.stop.reason)).c_str(),
           result.stop.peak_residual, r.rms_residual, r.model_flux, total, r.seconds.read, r.seconds.clean,
           r.seconds.restore, r.seconds.write);
  log.verbose("stages: select %.3f s, minor cycles %.3f s, PSF convolutions %.3f s, restore %.3f s%s",
              result.diagnostics.seconds.select, result.diagnostics.seconds.minor, result.diagnostics.seconds.convolve, result.diagnostics.seconds.restore,
              device == clean::Device::kGpu
                  ? (", peak GPU memory " + std::to_string(result.diagnostics.peak_gpu_bytes >> 20) + " MiB").c_str()
                  : "");
  outcome.report = std::move(r);
  return outcome;
}

void run_clean(const RunOptions& o) {
  run_observation(o, [&o](const Log& log) { return load_observation(o, log); });
}

}  // namespace gpuclean::app

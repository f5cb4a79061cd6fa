// The single-observation command: the pipeline's three stages in a row.

#include <chrono>

#include "app/log.hpp"
#include "app/pipeline.hpp"
#include "app/run_options.hpp"

namespace gpuclean::app {

void run_clean(const RunOptions& o) {
  const auto t_start = std::chrono::steady_clock::now();
  clean::validate(o.settings);
  const Log log(o.verbosity, o.json == "-");
  check_outputs(o);
  clean::Device device = resolve_device(o.settings.device, log);
  clean::make_deconvolver(o.settings.algorithm, device);  // refuses a device this build lacks before any work

  LoadedObservation obs = load_observation(o, log);
  device = fit_device(device, obs, log);
  const auto deconvolver = clean::make_deconvolver(o.settings.algorithm, device);
  const clean::CleanResult result = clean_observation(obs, device, *deconvolver, log);
  write_observation(obs, result, log);

  const RunReport& r = obs.report;
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  log.info("done: %zu components in %zu major cycles, stopped on %s; peak residual %.4e Jy/beam, "
           "residual RMS %.4e Jy/beam, model flux %.5g Jy; %.2f s (read %.2f, clean %.2f, restore %.2f, write %.2f)",
           result.iterations, result.major_cycles, std::string(clean::to_string(result.reason)).c_str(),
           result.peak_residual, r.rms_residual, r.model_flux, total, r.seconds.read, r.seconds.clean,
           r.seconds.restore, r.seconds.write);
  log.verbose("stages: select %.3f s, minor cycles %.3f s, PSF convolutions %.3f s, restore %.3f s%s",
              result.seconds.select, result.seconds.minor, result.seconds.convolve, result.seconds.restore,
              device == clean::Device::kGpu
                  ? (", peak GPU memory " + std::to_string(result.peak_gpu_bytes >> 20) + " MiB").c_str()
                  : "");
}

}  // namespace gpuclean::app

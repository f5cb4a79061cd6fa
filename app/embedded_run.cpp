#include "app/embedded_run.hpp"

#include "app/pipeline.hpp"
#include "clean/errors.hpp"
#include "app/run_report.hpp"
#include "clean/gpu_memory.hpp"

namespace gpuclean::app {
namespace {

EmbeddedRun embedded(const RunOptions& options, const std::function<LoadedObservation(const Log&)>& load) {
  // Without the restored image's name nothing is written; other outputs alone would be lost.
  if (options.output.empty() && output_paths(options).size() > 1) {
    throw clean::InvalidSettings("give the restored image's name (output=..., -o on the command line) to write "
                                 "any output.");
  }
  RunOutcome outcome = run_observation(options, load);
  std::string json = make_summary_json(outcome.report, outcome.result, options).dump(2);
  return {std::move(outcome.result), std::move(json)};
}

}  // namespace

EmbeddedRun run_embedded(const RunOptions& options) {
  return embedded(options, [&options](const Log& log) { return load_observation(options, log); });
}

EmbeddedRun run_embedded(const RunOptions& options, io::FitsImage dirty, io::FitsImage psf,
                         std::optional<clean::HostImage> mask) {
  return embedded(options, [&](const Log& log) {
    return prepare_observation(options, {std::move(dirty), std::move(psf), std::move(mask), std::nullopt, {}}, log);
  });
}

EmbeddedRun run_embedded(const RunOptions& options, const clean::DeviceImage& dirty, io::FitsImage dirty_header,
                         io::FitsImage psf, std::optional<clean::HostImage> mask) {
  return embedded(options, [&](const Log& log) {
    const clean::DeviceImageFacts facts = clean::inspect_device_image(dirty);
    dirty_header.width = dirty.width;
    dirty_header.height = dirty.height;
    dirty_header.nan_count = facts.nan_count;
    dirty_header.pixels.clear();
    ObservationImages images{std::move(dirty_header), std::move(psf), std::move(mask), dirty, facts.not_nan};
    return prepare_observation(options, std::move(images), log);
  });
}

}  // namespace gpuclean::app

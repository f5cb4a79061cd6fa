#include "app/outer/outer_loop_run.hpp"

#include <utility>

#include "app/errors.hpp"
#include "app/option_table.hpp"
#include "app/pipeline.hpp"
#include "clean/errors.hpp"
#include "io/fits_reader.hpp"

namespace gpuclean::app {
namespace {

// The single command's options that name a file, and what WSClean does instead.
void refuse_files(const RunOptions& o) {
  const std::pair<const std::string*, const char*> files[] = {
      {&o.dirty, "DIRTY"},   {&o.psf, "PSF"},           {&o.output, "-o/--output"},
      {&o.model, "--model"}, {&o.residual, "--residual"}, {&o.components, "--components"},
      {&o.json, "--json"},   {&o.quicklook, "--quicklook"}, {&o.noise_map, "--noise-map"},
      {&o.compare_prefix, "--compare-prefix"}, {&o.cube.source_list, "--save-source-list"}};
  for (const auto& [value, name] : files) {
    if (!value->empty())
      throw clean::InvalidSettings(std::string(name) + " is not for a run inside WSClean, which reads the "
                                   "visibilities and writes the images; leave it out of GPUCLEAN_OPTIONS.");
  }
  if (o.cube.wsclean_channels)
    throw clean::InvalidSettings("--wsclean-channels is not for a run inside WSClean, which hands over its channels "
                                 "itself; leave it out of GPUCLEAN_OPTIONS.");
  if (o.settings.compare_select)
    throw clean::InvalidSettings("--compare-select writes a report per run; use it with the gpuclean command, not "
                                 "inside WSClean.");
}

}  // namespace

OuterLoopOptions parse_outer_loop_options(const std::vector<std::string>& args) {
  RunOptions o = parse_run_options(args);
  refuse_files(o);
  clean::validate(o.settings);
  return {o.settings, o.fits_mask, o.verbosity};
}

std::unique_ptr<clean::OuterLoopSession> start_outer_loop(const OuterLoopOptions& options, clean::OuterLoopInput input,
                                                          const std::vector<const float*>& first, const Log& log) {
  clean::CleanSettings settings = options.settings;
  if (!options.fits_mask.empty()) {
    io::FitsImage mask = io::read_fits_image(options.fits_mask);
    if (mask.width != input.width || mask.height != input.height)
      throw clean::InvalidInput("--fits-mask '" + options.fits_mask + "' is " + std::to_string(mask.width) + " x " +
                                std::to_string(mask.height) + " pixels; WSClean's images are " +
                                std::to_string(input.width) + " x " + std::to_string(input.height) + ".");
    input.fits_mask.emplace(mask.width, mask.height);
    input.fits_mask->pixels = std::move(mask.pixels);
  }
  // The device, the memory check and the CPU fallback are the run plan's (clean/run_plan.hpp).
  auto session = std::make_unique<clean::OuterLoopSession>(settings, std::move(input), first);
  if (!session->device_note().empty()) log.verbose("%s", session->device_note().c_str());
  if (!session->plan().fallback.empty()) log.warn("%s", session->plan().fallback.c_str());
  return session;
}

}  // namespace gpuclean::app

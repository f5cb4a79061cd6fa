#include "app/image/image_command.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "app/image/clean_run.hpp"
#include "app/image/image_checks.hpp"
#include "app/image/image_args.hpp"
#include "app/image/image_gpus.hpp"
#include "app/image/image_log.hpp"
#include "app/image/image_outputs.hpp"
#include "app/image/ms_guard.hpp"
#include "app/image/primary_beam.hpp"
#include "app/image/predict_command.hpp"
#include "app/version.hpp"
#include "clean/errors.hpp"
#include "clean/run_plan.hpp"
#include "imaging/image_run.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_selection.hpp"
#include "io/staged_outputs.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

// -temp-dir: WSClean writes its reordered files there; gpuclean writes none, but a pipeline's
// folder that cannot take them is as wrong here as it would be in WSClean.
// A test file is made there (folder_write_problem): as root access() says yes on a read-only mount.
void check_temp_dir(const std::string& dir) {
  if (dir.empty()) return;
  const std::string problem = folder_write_problem(dir);
  if (problem == "does not exist" || problem.rfind("is not a folder", 0) == 0)
    throw clean::InvalidSettings("-temp-dir " + dir + " " + problem + "; create it or give another folder");
  if (!problem.empty())
    throw clean::InvalidSettings("-temp-dir " + dir + " " + problem + "; give a folder this user can write");
}

// -intervals-out N: the selected timesteps [tS, tE) of the first MS (W31:main/wsclean.cpp
// selectInterval), cut into N equal parts; none when N is 1.
std::vector<std::pair<std::size_t, std::size_t>> output_intervals(const ImageOptions& o) {
  if (o.intervals_out == 1) return {};
  std::size_t begin = 0, end = 0;
  if (o.selection.interval) {
    std::tie(begin, end) = *o.selection.interval;
  } else {
    end = io::ms::count_timesteps(o.ms.front());
  }
  if (o.intervals_out > end - begin)
    throw clean::InvalidSettings("-intervals-out " + std::to_string(o.intervals_out) + " is more than the " +
                                 std::to_string(end - begin) + " selected timesteps; give fewer intervals");
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < o.intervals_out; ++i)
    out.emplace_back(begin + (end - begin) * i / o.intervals_out, begin + (end - begin) * (i + 1) / o.intervals_out);
  return out;
}

std::string four_digits(std::size_t i) {
  char text[24];
  std::snprintf(text, sizeof text, "%04zu", i);
  return text;
}

/// One interval's run (or the whole run): every check, then imaging or cleaning, then the files.
int run_one(const ImageOptions& run, const std::string& command_line, const std::string& device_note,
            const std::chrono::steady_clock::time_point start) {
  if (!run.predict) check_image_outputs(run);
  const ImageRunGuard guard(run);  // MS write locks, stopped runs' leftovers; before any read
  if (run.predict) return run_predict(run);  // writes the model column, no image
  std::vector<io::ms::MsMetadata> metadata;
  for (const std::string& ms : run.ms) metadata.push_back(io::ms::read_ms_metadata(ms));
  const std::vector<io::ms::MsSelection> selections = io::ms::select_visibilities(metadata, run.selection);
  plan_primary_beam(run, metadata.front());  // -apply-primary-beam: the telescope's dish model, the -pol list
  for (const io::ms::PolRequest pol : run.pols) {  // every polarization the MSs must give, before the read
    io::ms::SelectionRequest request = run.selection;
    request.pol = pol;
    io::ms::select_visibilities(metadata, request);
  }
  // -channels-out against the selected channels, and the memory plan, before the read.
  imaging::output_channel_ranges(selections.front().freq_hz, run.run.channels_out, run.run.channel_division_hz);
  const std::string memory = imaging::check_image_memory(selections, run.run);
  // Only now: a refused input prints nothing but its one line on stderr.
  if (!device_note.empty()) image_log::info("gpuclean image: %s", device_note.c_str());
  for (const std::string& note : run.notes) image_log::info("gpuclean image: %s", note.c_str());
  if (run.dry_run) {
    image_log::info("gpuclean image: -dry-run: the options, %zu MS and the outputs' folder checked; memory: %s; "
                    "nothing imaged", run.ms.size(), memory.c_str());
    return 0;
  }
  image_log::info("gpuclean image: memory: %s", memory.c_str());
  if (run.niter > 0) {
    run_clean(run, metadata, selections, command_line);
    image_log::info("cleaned %zu MS, %zux%zu, %zu output channel(s): %.2f s -> %s-*.fits", run.ms.size(),
                    run.run.image.width, run.run.image.height, run.run.channels_out,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), run.name.c_str());
    return 0;
  }
  // Each polarization imaged in WSClean's set order, all staged, then committed together.
  io::StagedOutputs staged(true);
  imaging::ImageRunResult result;
  auto written = std::chrono::steady_clock::now();
  for (const io::ms::PolRequest pol : run.pols) {
    ImageOptions p = run;
    p.selection.pol = pol;
    const std::vector<io::ms::MsSelection> pol_selections =
        pol == run.selection.pol ? selections : io::ms::select_visibilities(metadata, p.selection);
    imaging::ImageRunResult r = imaging::image_run(pol_selections, p.run);
    const auto imaged = std::chrono::steady_clock::now();
    write_image_outputs(p, r, ImageContext{&metadata.front(), &pol_selections.front(), command_line}, nullptr, &staged);
    if (pol == run.pols.front()) result = std::move(r), written = imaged;
  }
  staged.commit();
  const auto end = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(end - start).count();
  const imaging::ImageTimings& t = result.timings;
  // One key=value line for scripts (scripts/imaging_bench.py reads it); gridding_vis_per_s is
  // the gridded samples over the time in the gridding kernels (GPU) or in the whole inversion (CPU).
  const double grid_s = t.grid_kernel_s > 0 ? t.grid_kernel_s : t.invert_s;
  image_log::info("gpuclean image: timings read=%.3f weights=%.3f invert=%.3f predict=0 write=%.3f inversions=%zu "
                  "samples=%zu gridding_vis_per_s=%.4g device=%s gpus=%s",
                  t.read_s, t.weights_s, t.invert_s, std::chrono::duration<double>(end - written).count(),
                  t.inversions, t.samples, grid_s > 0 ? static_cast<double>(t.samples) / grid_s : 0.0,
                  run.run.device == clean::Device::kGpu ? "gpu" : "cpu",
                  run.run.device == clean::Device::kGpu ? gpu_list_text(run.run.gpus).c_str() : "none");
  const imaging::ChannelImage& shown = result.mfs ? *result.mfs : result.channels.front();
  image_log::info("imaged %zu MS, %zux%zu, %zu output channel(s): %zu visibilities gridded (channel 0), %zu "
                  "w-planes, %.2f s -> %s-*.fits",
                  run.ms.size(), run.run.image.width, run.run.image.height, result.channels.size(),
                  shown.counters.visibilities, shown.w_planes, seconds, run.name.c_str());
  return 0;
}

}  // namespace

int run_image(const std::vector<std::string>& args, const std::string& command_line) {
  const ImageOptions o = parse_image_args(args);  // every value checked before any work
  if (o.help) {
    std::fputs(image_usage().c_str(), stdout);
    return 0;
  }
  if (o.version) {
    std::printf("gpuclean %s: gpuclean image takes WSClean's command line (WSClean 3.1's defaults, 3.7's options)\n",
                kVersion);
    return 0;
  }
  image_log::configure(o.verbosity, o.log_time);
  check_temp_dir(o.resources.temp_dir);
  std::string device_note;
  ImageOptions run = o;
  run.run.device = clean::resolve_device(o.device, &device_note);  // -device gpu without one: exit 4
  if (run.run.device == clean::Device::kGpu) {  // a bad GPUCLEAN_TEST_IMAGE_GPUS: exit 2, before any work
    const char* test_gpus = std::getenv("GPUCLEAN_TEST_IMAGE_GPUS");
    run.run.gpus = image_gpus(o.max_gpus, cuda::device_count(), test_gpus ? test_gpus : "");
    if (!run.run.gpus.empty()) run.run.gpu = run.run.gpus.front();
  }
  const auto start = std::chrono::steady_clock::now();
  check_before_opening(run);  // outputs and their folders, -size's memory, -predict's models: no MS opened yet
  check_interval(run);        // -interval against each MS's timesteps (TIME), before any visibility
  const std::vector<std::pair<std::size_t, std::size_t>> intervals = output_intervals(run);
  if (intervals.empty()) return run_one(run, command_line, device_note, start);
  // WSClean images each interval as a run of its own, NAME-t000i-... (W31:io/imagefilename.h);
  // every interval's outputs are checked before the first is imaged.
  std::vector<ImageOptions> parts(intervals.size(), run);
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    parts[i].name = o.name + "-t" + four_digits(i);
    parts[i].selection.interval = intervals[i];
    if (!run.predict) check_image_outputs(parts[i]);
  }
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    const ImageOptions& part = parts[i];
    image_log::info("gpuclean image: interval %zu of %zu: timesteps %zu to %zu", i + 1, intervals.size(),
                    intervals[i].first, intervals[i].second);
    if (const int code = run_one(part, command_line, i == 0 ? device_note : std::string(), start)) return code;
  }
  return 0;
}

}  // namespace gpuclean::app

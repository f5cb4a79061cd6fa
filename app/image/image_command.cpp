#include "app/image/image_command.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/image/clean_run.hpp"
#include "app/image/image_args.hpp"
#include "app/image/image_gpus.hpp"
#include "app/image/image_outputs.hpp"
#include "app/image/predict_command.hpp"
#include "clean/run_plan.hpp"
#include "imaging/image_run.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_selection.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {

int run_image(const std::vector<std::string>& args, const std::string& command_line) {
  const ImageOptions o = parse_image_args(args);  // every value checked before any work
  if (o.help) {
    std::fputs(image_usage().c_str(), stdout);
    return 0;
  }
  std::string device_note;
  ImageOptions run = o;
  run.run.device = clean::resolve_device(o.device, &device_note);  // -device gpu without one: exit 4
  if (run.run.device == clean::Device::kGpu) {  // a bad GPUCLEAN_TEST_IMAGE_GPUS: exit 2, before any work
    const char* test_gpus = std::getenv("GPUCLEAN_TEST_IMAGE_GPUS");
    run.run.gpus = image_gpus(o.max_gpus, cuda::device_count(), test_gpus ? test_gpus : "");
    if (!run.run.gpus.empty()) run.run.gpu = run.run.gpus.front();
  }
  if (o.predict) return run_predict(run);  // writes MODEL_DATA, no image
  check_image_outputs(run);
  const auto start = std::chrono::steady_clock::now();
  std::vector<io::ms::MsMetadata> metadata;
  for (const std::string& ms : o.ms) metadata.push_back(io::ms::read_ms_metadata(ms));
  const std::vector<io::ms::MsSelection> selections = io::ms::select_visibilities(metadata, run.selection);
  // -channels-out against the selected channels, and the memory plan, before the read.
  imaging::output_channel_ranges(selections.front().freq_hz, run.run.channels_out, run.run.channel_division_hz);
  const std::string memory = imaging::check_image_memory(selections, run.run);
  // Only now: a refused input prints nothing but its one line on stderr.
  if (!device_note.empty()) std::printf("gpuclean image: %s\n", device_note.c_str());
  std::printf("gpuclean image: memory: %s\n", memory.c_str());
  if (o.niter > 0) {
    run_clean(run, metadata, selections, command_line);
    std::printf("cleaned %zu MS, %zux%zu, %zu output channel(s): %.2f s -> %s-*.fits\n", o.ms.size(),
                run.run.image.width, run.run.image.height, run.run.channels_out,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), o.name.c_str());
    return 0;
  }
  const imaging::ImageRunResult result = imaging::image_run(selections, run.run);
  const auto written = std::chrono::steady_clock::now();
  write_image_outputs(run, result, ImageContext{&metadata.front(), &selections.front(), command_line});
  const auto end = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(end - start).count();
  const imaging::ImageTimings& t = result.timings;
  // One key=value line for scripts (scripts/imaging_bench.py reads it); gridding_vis_per_s is
  // the gridded samples over the time in the gridding kernels (GPU) or in the whole inversion (CPU).
  const double grid_s = t.grid_kernel_s > 0 ? t.grid_kernel_s : t.invert_s;
  std::printf(
               "gpuclean image: timings read=%.3f weights=%.3f invert=%.3f predict=0 write=%.3f inversions=%zu "
               "samples=%zu gridding_vis_per_s=%.4g device=%s gpus=%s\n",
               t.read_s, t.weights_s, t.invert_s, std::chrono::duration<double>(end - written).count(), t.inversions,
               t.samples, grid_s > 0 ? static_cast<double>(t.samples) / grid_s : 0.0,
               run.run.device == clean::Device::kGpu ? "gpu" : "cpu",
               run.run.device == clean::Device::kGpu ? gpu_list_text(run.run.gpus).c_str() : "none");
  const imaging::ChannelImage& shown = result.mfs ? *result.mfs : result.channels.front();
  std::printf("imaged %zu MS, %zux%zu, %zu output channel(s): %zu visibilities gridded (channel 0), %zu w-planes, "
              "%.2f s -> %s-*.fits\n",
              o.ms.size(), run.run.image.width, run.run.image.height, result.channels.size(),
              shown.counters.visibilities, shown.w_planes, seconds, o.name.c_str());
  return 0;
}

}  // namespace gpuclean::app

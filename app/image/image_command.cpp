#include "app/image/image_command.hpp"

#include <chrono>
#include <cstdio>

#include "app/image/image_args.hpp"
#include "app/image/image_outputs.hpp"
#include "app/image/predict_command.hpp"
#include "imaging/image_run.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::app {

int run_image(const std::vector<std::string>& args, const std::string& command_line) {
  const ImageOptions o = parse_image_args(args);  // every value checked before any work
  if (o.help) {
    std::fputs(image_usage().c_str(), stdout);
    return 0;
  }
  if (o.predict) return run_predict(o);  // writes MODEL_DATA, no image
  check_image_outputs(o);
  const auto start = std::chrono::steady_clock::now();
  std::vector<io::ms::MsMetadata> metadata;
  for (const std::string& ms : o.ms) metadata.push_back(io::ms::read_ms_metadata(ms));
  const std::vector<io::ms::MsSelection> selections = io::ms::select_visibilities(metadata, o.selection);
  // -channels-out against the selected channels, before the read.
  imaging::output_channel_ranges(selections.front().freq_hz.size(), o.run.channels_out);
  const imaging::ImageRunResult result = imaging::image_run(selections, o.run);
  write_image_outputs(o, result, ImageContext{&metadata.front(), &selections.front(), command_line});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const imaging::ChannelImage& shown = result.mfs ? *result.mfs : result.channels.front();
  std::printf("imaged %zu MS, %zux%zu, %zu output channel(s): %zu visibilities gridded (channel 0), %zu w-planes, "
              "%.2f s -> %s-*.fits\n",
              o.ms.size(), o.run.image.width, o.run.image.height, result.channels.size(),
              shown.counters.visibilities, shown.w_planes, seconds, o.name.c_str());
  return 0;
}

}  // namespace gpuclean::app

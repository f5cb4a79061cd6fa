#include "app/image/predict_command.hpp"
#include "app/image/image_log.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/image/model_data.hpp"
#include "app/image/predict_models.hpp"
#include "imaging/image_run.hpp"
#include "imaging/predict_run.hpp"
#include "io/ms/ms_metadata.hpp"

namespace gpuclean::app {

int run_predict(const ImageOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  io::ms::SelectionRequest request = o.selection;
  if (request.data_column.empty()) request.data_column = "DATA";  // WSClean's in predict mode; only its rows are read
  std::vector<io::ms::MsMetadata> metadata;
  for (const std::string& ms : o.ms) metadata.push_back(io::ms::read_ms_metadata(ms));
  const std::vector<io::ms::MsSelection> selections = io::ms::select_visibilities(metadata, request);
  imaging::output_channel_ranges(selections.front().freq_hz, o.run.channels_out, o.run.channel_division_hz);

  imaging::PredictRunSettings settings;
  settings.image = check_models(o.name, o.run.channels_out, o.run.image, selections.front());
  settings.channels_out = o.run.channels_out;
  settings.channel_division_hz = o.run.channel_division_hz;
  settings.epsilon = o.run.epsilon;
  settings.threads = o.run.threads;
  settings.backend = predict_backend(o.run);
  if (o.dry_run) {  // every check made; nothing predicted, the MS left as it is
    image_log::info("gpuclean image: -dry-run: the options, %zu MS and %zu model(s) checked; nothing predicted",
                    o.ms.size(), o.run.channels_out);
    return 0;
  }
  const auto predict_start = std::chrono::steady_clock::now();
  const imaging::PredictRunResult result = imaging::predict_run(selections, settings, [&](std::size_t channel) {
    return read_model(o.name, channel, o.run.channels_out, settings.image, selections.front());
  });

  const auto end = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(end - start).count();
  std::size_t samples = 0, planes = 0;
  for (const imaging::PredictChannel& c : result.channels) samples += c.samples, planes = std::max(planes, c.w_planes);
  // The key=value line of `gpuclean image` (scripts/imaging_bench.py): predict covers reading
  // u, v, w, the models, degridding and writing MODEL_DATA.
  image_log::info(
               "gpuclean image: timings read=0 weights=0 invert=0 predict=%.3f write=0 inversions=0 samples=%zu "
               "gridding_vis_per_s=0 device=%s\n",
               std::chrono::duration<double>(end - predict_start).count(), samples,
               o.run.device == clean::Device::kGpu ? "gpu" : "cpu");
  image_log::info("predicted %zu MS, %zux%zu, %zu output channel(s): %zu visibilities in %zu rows, up to %zu w-planes, "
              "%.2f s -> %s\n",
              o.ms.size(), settings.image.width, settings.image.height, result.channels.size(), samples, result.rows,
              planes, seconds, o.selection.model_column.c_str());
  return 0;
}

}  // namespace gpuclean::app

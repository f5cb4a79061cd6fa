#include "app/image/image_checks.hpp"

#include <cstdio>

#include "app/image/image_args.hpp"
#include "app/image/image_outputs.hpp"
#include "app/image/predict_models.hpp"
#include "clean/errors.hpp"
#include "imaging/image_run.hpp"
#include "io/ms/ms_metadata.hpp"

namespace gpuclean::app {

void check_before_opening(const ImageOptions& run) {
  if (run.predict) {
    const imaging::ImageGeometry image = check_model_files(run.name, run.run.channels_out, run.run.image);
    check_image_horizon(image);
    return;
  }
  // -intervals-out N: NAME-t000i-... for each part (image_command.cpp), every one checked now.
  if (run.intervals_out <= 1) {
    check_image_outputs(run);
  } else {
    for (std::size_t i = 0; i < run.intervals_out; ++i) {
      char tag[32];
      std::snprintf(tag, sizeof tag, "-t%04zu", i);
      ImageOptions part = run;
      part.name = run.name + tag;
      check_image_outputs(part);
    }
  }
  imaging::check_image_size_memory(run.run);
}

void check_interval(const ImageOptions& run) {
  if (!run.selection.interval) return;
  const auto [begin, end] = *run.selection.interval;
  for (const std::string& ms : run.ms) {
    const std::size_t steps = io::ms::count_timesteps(ms);
    if (begin >= steps)
      throw clean::InvalidInput("-interval " + std::to_string(begin) + " " + std::to_string(end) + " starts after the " +
                                std::to_string(steps) + " timesteps of '" + ms + "' (numbered from 0): it selects no " +
                                "row; give a start below " + std::to_string(steps));
  }
}

}  // namespace gpuclean::app

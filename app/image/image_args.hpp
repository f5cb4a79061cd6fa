#pragma once
// `gpuclean image`'s command line: WSClean's options as the option table has them
// (app/wsclean/wsclean_option.hpp), one dash or two, and gpuclean's own (-device, -max-gpus,
// -json). Every value and every rule between options is checked here, before any MS is opened.
#include <string>
#include <vector>

#include "app/image/image_options.hpp"

namespace gpuclean::app {

/// `args` are the words after "image". Throws clean::InvalidSettings (exit 2) with one sentence
/// for an unknown option, a missing or bad value, an option gpuclean cannot honour, a rule
/// between options WSClean enforces, or no MS; clean::InvalidInput or io::FitsError (exit 3) for
/// a -fits-mask that does not open or fit.
ImageOptions parse_image_args(const std::vector<std::string>& args);

/// The gridder's field must stay inside the horizon (l² + m² < 1 at the image's corners), which
/// -size and -scale alone decide: throws clean::InvalidSettings (exit 2) naming both otherwise.
void check_image_horizon(const imaging::ImageGeometry& image);

/// The option list for -help: WSClean's options with gpuclean's support, then gpuclean's own.
std::string image_usage();

/// WSCWEIGH's text: natural, uniform or Briggs'(R) (W31:structures/weightmode.h ToString).
std::string weight_mode_text(const imaging::WeightingSettings& w);

}  // namespace gpuclean::app

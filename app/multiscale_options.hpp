#pragma once
// The --multiscale options, named after WSClean's (-multiscale, -multiscale-scales, ...).

#include <CLI/CLI.hpp>

#include "clean/multiscale_settings.hpp"

namespace gpuclean::app {

void add_multiscale_options(CLI::App& app, clean::MultiscaleSettings& m);

}  // namespace gpuclean::app

#pragma once
// The checks of `gpuclean image` that come after the command line's (parse_image_args: every
// value and every rule between options) and before the first visibility is read (issue 46).
// Each refusal is one line on stderr with the exit code of docs/cli.md.
#include <string>

#include "app/image/image_options.hpp"

namespace gpuclean::app {

/// Before any MeasurementSet is opened: every output of the run (of each -intervals-out part)
/// against the inputs, and each output folder written to with a test file (exit 4 when it is
/// missing, a file, or cannot take a file); what -size alone needs in memory (exit 4); with
/// -predict, each model file (present, FITS, the run's size and pixel scale: exit 3) and the
/// field inside the horizon.
void check_before_opening(const ImageOptions& run);

/// After the MSs' metadata and before their visibilities: -interval a b against each MS's
/// timesteps (its TIME column): a start at or past the last timestep selects no row (exit 3).
void check_interval(const ImageOptions& run);

}  // namespace gpuclean::app

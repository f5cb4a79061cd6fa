#pragma once
// `gpuclean image`'s progress lines on stdout, as WSClean's -quiet, -verbose and -log-time ask:
// -quiet keeps only errors (stderr), -log-time starts each line with the local date and time.
// Set once when the command starts; the run's threads may print.
#include "app/run_options.hpp"

namespace gpuclean::app::image_log {

void configure(Verbosity verbosity, bool log_time);

/// A progress line (a newline is added when the format has none at its end).
void info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/// A line shown only with -verbose.
void verbose(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace gpuclean::app::image_log

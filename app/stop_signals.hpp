#pragma once
// SIGINT, SIGTERM and SIGHUP (Ctrl-C, Slurm's and a batch system's stop, a closed terminal) end a
// run cleanly: the staged outputs are removed (a commit in progress is first finished, so the
// MeasurementSets and the outputs stay together), one line says what was done, and the process
// exits with 128 + the signal's number. A second signal while a commit finishes exits at once;
// the next run completes that commit (io/stage_folder.hpp).

namespace gpuclean::app {

/// Blocks the signals in the calling thread (every thread started later inherits that) and
/// starts the thread that waits for them. Call at the start of main, before any other thread.
void install_stop_signals();

/// At the end of main: when a stop signal arrived during the run's last commit, waits for the
/// stop thread to say so and exit with the signal's code (instead of 0 with a stop unreported).
void finish_if_stopped();

}  // namespace gpuclean::app

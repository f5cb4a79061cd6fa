#pragma once
// Exit codes of the gpuclean binary (documented in docs/cli.md, "Exit codes").

namespace gpuclean::app {

enum class ExitCode : int {
  kOk = 0,
  kInternal = 1,  ///< a bug: please report it
  kUsage = 2,     ///< bad command line or settings, or an output that exists (use --overwrite)
  kInput = 3,     ///< an input file is missing, not FITS, or unusable (NaN PSF, sizes)
  kRuntime = 4,   ///< the run failed: cannot write, out of memory, GPU failure
  kBatchFailures = 5,  ///< batch: at least one observation failed (the others ran; see the report)
  kBusy = 6,      ///< image: another gpuclean run is writing the MeasurementSet's MODEL_DATA
  // 128 + N: stopped by signal N (SIGINT 130, SIGTERM 143, SIGHUP 129); staged outputs removed
};

inline int to_int(ExitCode c) { return static_cast<int>(c); }

}  // namespace gpuclean::app

#pragma once
// `gpuclean bench clean --channels N`: CLEAN of a simulated wideband cube (each channel its own
// PSF, sources with spectral indices), joined (--join-channels) on the GPU and on the CPU path,
// and every plane on its own (the cube command's concurrent GPU workers) as channels per second.

#include "app/bench/bench_clean.hpp"

namespace gpuclean::app {

/// Returns 0, or 4 when a run failed.
int run_bench_cube(const BenchCleanOptions& options);

}  // namespace gpuclean::app

#pragma once
// `gpuclean bench gridder`: the GPU w-stacking gridder and degridder (imaging/gpu/gridder_gpu.hpp)
// on the synthetic uvw of the imaging benchmark's cases (docs/design/imaging-plan.md §7), without a
// MeasurementSet: per output channel, one plan chosen as `gpuclean image` chooses it, then
// invert_gpu (dirty + PSF in one pass, and dirty alone) and predict_gpu, each the median of
// --repeat calls after a warm-up, with their phases, rates and the FFT's share of the memory
// bandwidth; with the CPU reference (invert_cpu, predict_cpu) and their difference on request.

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpuclean::app {

struct BenchGridderOptions {
  std::string cases = "A";  ///< A, B, C or all
  // Overrides of every chosen case (0: the case's own).
  std::size_t size = 0;
  double scale_arcsec = 0;
  std::size_t channels = 0;
  std::size_t rows = 0;     ///< rounded to whole integrations of the 2,016 baselines
  double hours = 0;         ///< track length, centred on transit
  double dec_deg = -28.0;   ///< simulate_ms.py's default, as in imaging_bench.py's MeasurementSets
  std::size_t repeat = 5;   ///< GPU: timed calls after one warm-up
  std::size_t cpu_repeat = 1;
  bool cpu = false;         ///< time the CPU reference too (the default for case A only)
  bool no_cpu = false;
  double epsilon = 1e-4;
  int gpu = 0;
  std::uint64_t seed = 2026;
};

/// Prints the tables; returns 0. Throws RuntimeFailure (exit 4) without a usable GPU unless
/// --cpu asks for the CPU reference alone.
int run_bench_gridder(const BenchGridderOptions& options);

}  // namespace gpuclean::app

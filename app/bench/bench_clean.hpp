#pragma once
// `gpuclean bench clean`: GPU Clark, GPU Högbom and the CPU path on the same simulated fields,
// with time per stage, components per second and the traffic rate of the dominant passes; then
// the whole command line on one pair, FITS reading and writing and CUDA start-up included.

#include <cstddef>
#include <string>
#include <vector>

#include "clean/local_rms.hpp"

namespace gpuclean::app {

struct BenchCleanOptions {
  std::vector<std::size_t> sizes = {2048, 4096, 8192, 16384};
  std::vector<std::size_t> niters = {10000, 100000};
  std::vector<std::string> paths = {"gpu-clark", "gpu-hogbom", "cpu-clark"};
  std::size_t cpu_max_size = 4096;     ///< the CPU path is left out above this size
  std::size_t hogbom_max_size = 8192;  ///< GPU Högbom is left out above this size
  double threshold = 2e-5;             ///< Jy/beam, fixed (no auto-threshold): niter decides
  std::size_t sources = 3000;
  std::size_t gaussians = 0;           ///< extended sources per field (0: sources / 100)
  std::size_t max_scales = 5;          ///< multiscale paths: automatic scales, 0 included
  bool local_rms = false;              ///< Clark and multiscale paths: --local-rms
  double local_rms_window = 25.0;
  clean::LocalRmsMethod local_rms_method = clean::LocalRmsMethod::kRms;
  std::size_t cli_size = 4096;         ///< 0: skip the command-line run
  /// --channels N: bench a simulated N-channel cube instead (bench_cube.hpp): joined over N
  /// channels, and independent over `independent_channels` (the CPU path on `cpu_planes` of them).
  std::size_t channels = 0;
  std::size_t independent_channels = 64;
  std::size_t cpu_planes = 4;
  std::size_t parallel_planes = 0;     ///< independent: GPU workers (0: from memory, at most 4)
  std::string format = "table";
  std::string output;
};

/// Returns 0, or 4 when a run failed.
int run_bench_clean(const BenchCleanOptions& options);

}  // namespace gpuclean::app

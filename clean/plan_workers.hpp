#pragma once
// How many plane groups a GPU run cleans at once (plan_run's rule, apart so that it is tested
// without a GPU). Each GPU takes at most its share of the groups, ceil(groups / gpus), so that
// no worker is made (its streams, plans and staging) for a group it would never get; at most
// `parallel` and at most what its memory holds (`spare`). Workers are spread round-robin over
// the GPUs (for_each_worker), so the total below gives each GPU that many.

#include <algorithm>
#include <cstddef>

namespace gpuclean::clean {

inline std::size_t plan_workers(std::size_t groups, std::size_t gpus, std::size_t parallel, std::size_t spare) {
  gpus = std::max<std::size_t>(gpus, 1);
  const std::size_t share = (groups + gpus - 1) / gpus;
  const std::size_t per_gpu = std::max<std::size_t>(std::min({std::max<std::size_t>(parallel, 1), spare, share}), 1);
  return std::max<std::size_t>(std::min(per_gpu * gpus, groups), 1);
}

/// The automatic workers per GPU when the run may have up to `run_parallel` at once: that many
/// over all of its GPUs, at least `least_per_gpu` on each. Every worker pays a first-run setup
/// (streams, pinned staging, cuFFT plans, its share of the memory pool) that serialises between
/// workers and GPUs: on a 4 x H100 host, 64 planes of 2048^2 with 16 workers a GPU (one plane
/// each) spent 35 s of summed setup against 5.7 s with 16 workers on one GPU (four planes each),
/// and cleaned in 1.72 s against 1.03 s. A worker that cleans several planes pays it once.
inline std::size_t automatic_parallel_per_gpu(std::size_t gpus, std::size_t run_parallel, std::size_t least_per_gpu) {
  gpus = std::max<std::size_t>(gpus, 1);
  return std::max<std::size_t>(std::max(run_parallel / gpus, least_per_gpu), 1);
}

}  // namespace gpuclean::clean

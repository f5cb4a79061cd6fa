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

}  // namespace gpuclean::clean

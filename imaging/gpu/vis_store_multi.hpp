#pragma once
// The VisStore over several GPUs (multi-gpu-plan.md §2.4): one GPU backend (vis_store_gpu.hpp) per
// entry of `gpus`, each made, used and destroyed on its own worker thread, so a backend is only
// ever touched by one thread and different GPUs grid at once. Output channel c lives on lane
// owners[c] (channel_owners.hpp), whose backend has its own budget and memory plan (resident or
// streamed). A device listed twice gets two lanes splitting its budget (the tests' "0,0").
#include <cstddef>
#include <memory>
#include <vector>

#include "imaging/gpu/gridder_gpu.hpp"
#include "imaging/vis_store.hpp"

namespace gpuclean::imaging {

/// `options.device` is ignored; `options.budget_bytes` is each lane's; 0: the automatic budget
/// (vis_store_gpu.hpp) divided between the lanes of one device. `owners` (one per channel, in
/// channel order) must be non-decreasing and below gpus.size(), else std::invalid_argument.
std::unique_ptr<VisStoreBackend> make_multi_gpu_vis_store_backend(const GpuGridderOptions& options,
                                                                  const std::vector<int>& gpus,
                                                                  std::vector<std::size_t> owners);

}  // namespace gpuclean::imaging

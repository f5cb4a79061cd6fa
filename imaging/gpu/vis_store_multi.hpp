#pragma once
// The VisStore over several GPUs (multi-gpu-plan.md §2.4): one GPU backend (vis_store_gpu.hpp) per
// entry of `gpus`, each made, used and destroyed on its own worker thread, so a backend is only
// ever touched by one thread and different GPUs grid at once. Output channel c lives on lane
// owners[c] (channel_owners.hpp), whose backend has its own budget and memory plan (resident or
// streamed). A device listed twice gets two lanes splitting its budget (the tests' "0,0").
#include <cstddef>
#include <memory>
#include <string>
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

/// The store's line: "on 2 GPUs (0,1): channels 0-1 <lane 0's line>; channel 2 <lane 1's line>",
/// each lane named by its global channels (a lane's own line knows only its local ones); lanes
/// without a channel are left out. `lane_lines[l]` is lane l's backend's describe().
std::string describe_lanes(const std::vector<int>& gpus, const std::vector<std::size_t>& owners,
                           const std::vector<std::string>& lane_lines);

}  // namespace gpuclean::imaging

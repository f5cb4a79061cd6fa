// clean/gpu_memory.hpp in a build without CUDA: no run needs device memory, and no image can be
// in it.
#include "clean/errors.hpp"
#include "clean/gpu_memory.hpp"

namespace gpuclean::clean {

std::size_t gpu_bytes_needed(const RunShape&, const CleanSettings&) { return 0; }
std::size_t gpu_bytes_per_worker(const RunShape&, const CleanSettings&) { return 0; }
void start_gpu_warm_up() {}
void wait_for_gpu_warm_up() {}
void warm_up_gpus(const std::vector<int>&) {}
DeviceImageFacts inspect_device_image(const DeviceImage&) {
  throw InvalidSettings("this gpuclean was built without CUDA; pass the dirty image as a NumPy array.");
}
HostImage download_device_image(const DeviceImage&) {
  throw InvalidSettings("this gpuclean was built without CUDA; pass the dirty image as a NumPy array.");
}

}  // namespace gpuclean::clean

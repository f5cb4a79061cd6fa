// Device queries for a CPU-only build (no nvcc): there is never a usable device.
#include "select/cuda/device_info.hpp"

#include <stdexcept>
#include <string>

namespace gpuclean::cuda {

bool built_with_cuda() { return false; }
int device_count() { return 0; }
bool has_usable_device() { return false; }
std::string describe_device() { return "CPU-only build (compiled without CUDA)"; }
MemoryInfo device_memory() { return {}; }
int multiprocessor_count() { return 0; }
void keep_pool_memory() {}
void set_device(int device) {
  throw std::runtime_error("cannot use CUDA device " + std::to_string(device) + ": this build has no CUDA");
}
int current_gpu() { return 0; }
ScopedDevice::~ScopedDevice() = default;

}  // namespace gpuclean::cuda

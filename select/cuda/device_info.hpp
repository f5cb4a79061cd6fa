#pragma once
// What CUDA devices this process can use. Safe to call on machines with no GPU, no driver, or a
// CPU-only build: every failure means "no usable device".

#include <string>

namespace gpuclean::cuda {

/// True when this binary was compiled with CUDA support.
bool built_with_cuda();

/// Number of visible devices (0 on any error).
int device_count();

/// True when device 0 exists and can run the kernels compiled into this binary.
bool has_usable_device();

/// One line such as "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)", or the reason there is none.
std::string describe_device();

/// Free and total memory of the current device in bytes; {0, 0} when there is none. Free counts
/// the memory the stream-ordered pool holds without using it: the next allocation gets it.
struct MemoryInfo {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};
MemoryInfo device_memory();

/// Streaming multiprocessors of the current device; 0 when there is none.
int multiprocessor_count();

/// Tells the current device's stream-ordered pool to keep freed memory for the next allocation
/// instead of returning it to the driver (batch runs allocate the same sizes again and again).
void keep_pool_memory();

/// Makes `device` current for the calling thread (throws std::runtime_error when it cannot).
void set_device(int device);

/// The calling thread's current device; 0 when there is none (per_device.hpp's current_device()
/// throws instead, and needs the CUDA headers).
int current_gpu();

/// Makes a device current for a scope and the thread's previous one current again after it.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) : previous_(current_gpu()) { set_device(device); }
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_;
};

}  // namespace gpuclean::cuda

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "select/cuda/device_info.hpp"

namespace gpuclean::cuda {
namespace {

// Never launched: querying its attributes tells whether this binary holds code for the device.
__global__ void probe_kernel() {}

bool query_count(int* count) {
  const cudaError_t err = cudaGetDeviceCount(count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls start clean
    *count = 0;
    return false;
  }
  return true;
}

}  // namespace

bool built_with_cuda() { return true; }

int device_count() {
  int count = 0;
  query_count(&count);
  return count;
}

bool has_usable_device() {
  if (device_count() < 1) return false;
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, probe_kernel);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

std::string describe_device() {
  int count = 0;
  if (!query_count(&count) || count < 1) return "no CUDA device visible";
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    cudaGetLastError();
    return "CUDA device properties unavailable";
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %.1f GiB)%s", prop.name, prop.major, prop.minor,
                static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0),
                has_usable_device() ? "" : " [no kernel image for this device in this build]");
  return buf;
}

MemoryInfo device_memory() {
  MemoryInfo info;
  if (device_count() < 1) return info;
  if (cudaMemGetInfo(&info.free_bytes, &info.total_bytes) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  int dev = 0;
  cudaMemPool_t pool = nullptr;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) {
    std::uint64_t reserved = 0, used = 0;
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess && reserved > used) {
      info.free_bytes += static_cast<std::size_t>(reserved - used);
    }
  }
  cudaGetLastError();
  return info;
}

int multiprocessor_count() {
  int dev = 0, sms = 0;
  if (device_count() < 1 || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return sms;
}

void keep_pool_memory() {
  int dev = 0;
  cudaMemPool_t pool = nullptr;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  std::uint64_t keep = ~std::uint64_t{0};
  if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) cudaGetLastError();
}

void set_device(int device) {
  const cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("cannot use CUDA device " + std::to_string(device) + ": " + cudaGetErrorString(err));
  }
}

int current_gpu() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return device;
}

ScopedDevice::~ScopedDevice() {
  if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

}  // namespace gpuclean::cuda

#pragma once
// What CUDA keeps per device (a kernel's shared-memory limit) or a device tells once (its SM
// count), done once per device and process and thread-safe: batch mode runs workers on several
// GPUs, and a function attribute set on one device does not carry over to another.

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "select/cuda/cuda_check.hpp"

namespace gpuclean::cuda {

inline constexpr int kMaxDevices = 64;

inline int current_device() {
  int d = 0;
  GPUCLEAN_CUDA_TRY(cudaGetDevice(&d));
  if (d < 0 || d >= kMaxDevices) throw std::runtime_error("CUDA device index beyond " + std::to_string(kMaxDevices));
  return d;
}

/// Runs f() the first time it is called with the current device, for each device.
using PerDeviceOnce = std::array<std::once_flag, kMaxDevices>;
template <class F>
void once_per_device(PerDeviceOnce& flags, F&& f) {
  std::call_once(flags[static_cast<std::size_t>(current_device())], std::forward<F>(f));
}

/// The current device's SM count, read once per device.
inline int sm_count() {
  static std::array<std::atomic<int>, kMaxDevices> cache{};
  const int d = current_device();
  int v = cache[static_cast<std::size_t>(d)].load(std::memory_order_relaxed);
  if (v == 0) {
    GPUCLEAN_CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, d));
    cache[static_cast<std::size_t>(d)].store(v, std::memory_order_relaxed);  // every thread stores the same
  }
  return v;
}

/// A value computed once per device (an occupancy, a grid).
using PerDeviceInt = std::array<std::atomic<int>, kMaxDevices>;

/// Blocks of `threads` threads (and `smem` bytes of dynamic shared memory) that `kernel` keeps
/// resident on every SM of the current device at once: one wave, so that no SM idles through a
/// partial second wave of a grid-stride loop whose shares are equal. Computed once per device
/// into `cache`.
template <class Kernel>
int one_wave_grid(PerDeviceInt& cache, Kernel kernel, int threads, std::size_t smem = 0) {
  const auto d = static_cast<std::size_t>(current_device());
  int grid = cache[d].load(std::memory_order_relaxed);
  if (grid == 0) {
    int per_sm = 0;
    GPUCLEAN_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    grid = sm_count() * (per_sm > 0 ? per_sm : 1);
    cache[d].store(grid, std::memory_order_relaxed);  // every thread stores the same
  }
  return grid;
}

}  // namespace gpuclean::cuda

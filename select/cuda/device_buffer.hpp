#pragma once
// Owning, move-only device memory, allocated and freed in stream order.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "select/cuda/cuda_check.hpp"

namespace gpuclean::cuda {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t size, cudaStream_t stream) : size_(size), stream_(stream) {
    if (size_ > 0) GPUCLEAN_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), size_ * sizeof(T), stream_));
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), stream_(o.stream_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      stream_ = o.stream_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

 private:
  void release() noexcept {
    if (data_) GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeAsync(data_, stream_));
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace gpuclean::cuda

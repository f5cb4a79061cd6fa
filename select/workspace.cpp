#include "select/cuda/cuda_check.hpp"
#include "select/selector.hpp"

namespace gpuclean::select {

Workspace::~Workspace() {
  if (data_) GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeAsync(data_, stream_));
}

std::byte* Workspace::reserve(std::size_t bytes) {
  if (bytes <= capacity_ && data_) return data_;
  if (data_) GPUCLEAN_CUDA_TRY(cudaFreeAsync(data_, stream_));
  data_ = nullptr;
  capacity_ = 0;
  const std::size_t want = bytes == 0 ? 256 : bytes;
  GPUCLEAN_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), want, stream_));
  capacity_ = want;
  ++allocations_;
  return data_;
}

Workspace& Workspace::nested() {
  if (!nested_) nested_ = std::make_unique<Workspace>(stream_);
  return *nested_;
}

}  // namespace gpuclean::select

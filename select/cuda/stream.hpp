#pragma once
// An owned, non-blocking CUDA stream.

#include <cuda_runtime.h>

#include "select/cuda/cuda_check.hpp"

namespace gpuclean::cuda {

class Stream {
 public:
  Stream() { GPUCLEAN_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { GPUCLEAN_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream_)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace gpuclean::cuda

#pragma once
// What a GPU deconvolver keeps from one run to the next on its device: a stream and the cuFFT
// plans. Device buffers come from CUDA's stream-ordered pool, which is told to keep freed memory,
// so the next observation's images and workspaces are served without cudaMalloc.

#include "clean/gpu/fft_plan_cache.hpp"
#include "select/cuda/stream.hpp"

namespace gpuclean::clean::gpu {

class GpuResources {
 public:
  /// On the current device.
  GpuResources();
  cudaStream_t stream() const { return stream_.get(); }
  void synchronize() const { stream_.synchronize(); }
  FftPlanCache& plans() { return plans_; }
  int device() const { return device_; }

 private:
  int device_ = 0;
  cuda::Stream stream_;
  FftPlanCache plans_;
};

}  // namespace gpuclean::clean::gpu

#include "clean/gpu/gpu_resources.hpp"

#include "select/cuda/device_info.hpp"

namespace gpuclean::clean::gpu {

GpuResources::GpuResources() {
  GPUCLEAN_CUDA_TRY(cudaGetDevice(&device_));
  cuda::keep_pool_memory();
}

}  // namespace gpuclean::clean::gpu

#include "clean/gpu/gpu_resources.hpp"

#include "clean/gpu/fft_convolver_gpu.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::clean::gpu {

GpuResources::GpuResources() {
  GPUCLEAN_CUDA_TRY(cudaGetDevice(&device_));
  cuda::keep_pool_memory();
  // Workers on one GPU share its pool. By default the pool may hand one stream a block another
  // stream freed but has not reached yet, making the first wait for the second: that would
  // chain independent observations together. Without it a block is reused across streams only
  // once its free has run; the pool grows a little instead.
  cudaMemPool_t pool = nullptr;
  GPUCLEAN_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device_));
  int no = 0;
  GPUCLEAN_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &no));
}

void GpuResources::prepare_plans(std::size_t width, std::size_t height) {
  const PaddedLayout l = padded_layout(width, height, width / 2, height / 2, width, height);
  plans_.get(stream(), l.pw, l.ph);
  side_plans_.get(side_stream(), l.pw, l.ph);
}

GpuResources::~GpuResources() {
  // Cached spectra are freed on the main stream once their transforms are done (Spectrum's
  // destructor); the streams outlive them. Wait for both streams so that nothing this worker
  // enqueued is still running when its memory goes back to the pool.
  GPUCLEAN_CUDA_TRY_NO_THROW(cudaStreamSynchronize(side_.get()));
  GPUCLEAN_CUDA_TRY_NO_THROW(cudaStreamSynchronize(stream_.get()));
}

}  // namespace gpuclean::clean::gpu

// inspect_device_image and download_device_image (clean/gpu_memory.hpp).
#include "clean/gpu_memory.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "clean/errors.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean {
namespace {

__global__ void not_nan_kernel(const float* image, std::size_t n, std::uint8_t* not_nan, unsigned long long* nans) {
  unsigned long long mine = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const bool nan = isnan(image[i]);
    not_nan[i] = nan ? 0 : 1;
    mine += nan;
  }
  for (int o = 16; o > 0; o >>= 1) mine += __shfl_xor_sync(0xFFFFFFFFu, mine, o);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(nans, mine);
}

cudaStream_t stream_of(const DeviceImage& image) { return reinterpret_cast<cudaStream_t>(image.stream); }

void check_pointer(const DeviceImage& image) {
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, image.data);
  int current = 0;
  GPUCLEAN_CUDA_TRY(cudaGetDevice(&current));
  if (e != cudaSuccess || (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) ||
      a.device != current) {
    cudaGetLastError();  // clear a failed query
    throw InvalidInput("the dirty image is not in the memory of CUDA device " + std::to_string(current) +
                       "; pass an array on that device (or a NumPy array).");
  }
}

}  // namespace

DeviceImageFacts inspect_device_image(const DeviceImage& image) {
  check_pointer(image);
  const std::size_t n = image.width * image.height;
  const cudaStream_t s = stream_of(image);
  DeviceImageFacts facts;
  cuda::DeviceBuffer<std::uint8_t> not_nan(n, s);
  cuda::DeviceBuffer<unsigned long long> nans(1, s);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(nans.data(), 0, sizeof(unsigned long long), s));
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096));
  not_nan_kernel<<<blocks, 256, 0, s>>>(image.data, n, not_nan.data(), nans.data());
  GPUCLEAN_CHECK_LAUNCH();
  unsigned long long count = 0;
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&count, nans.data(), sizeof count, cudaMemcpyDeviceToHost, s));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  facts.nan_count = static_cast<std::size_t>(count);
  if (count > 0) {
    facts.not_nan.resize(n);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(facts.not_nan.data(), not_nan.data(), n, cudaMemcpyDeviceToHost, s));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  }
  return facts;
}

HostImage download_device_image(const DeviceImage& image) {
  HostImage out(image.width, image.height);
  const cudaStream_t s = stream_of(image);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(out.pixels.data(), image.data, out.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  return out;
}

}  // namespace gpuclean::clean

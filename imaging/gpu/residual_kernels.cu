// The residual values of a resident VisStore channel (gridder_device.hpp residual_values): the
// model's subtraction fused into the values the gridder reads, so the data never leave the device.
#include <algorithm>

#include "imaging/gpu/gridder_device.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::imaging::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void residual_kernel(std::size_t n, const float2* data, const float2* psf, const double2* model,
                                float2* out) {
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float2 p = psf[j];
    const double cw = hypot(static_cast<double>(p.x), static_cast<double>(p.y));
    const double2 m = model[j];
    out[j] = make_float2(static_cast<float>(data[j].x - cw * m.x), static_cast<float>(data[j].y - cw * m.y));
  }
}

}  // namespace

void residual_values(cudaStream_t stream, std::size_t n, const float2* data, const float2* psf, const double2* model,
                     float2* out) {
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 1u << 20));
  residual_kernel<<<blocks, kThreads, 0, stream>>>(n, data, psf, model, out);
  GPUCLEAN_CHECK_LAUNCH();
}

}  // namespace gpuclean::imaging::gpu

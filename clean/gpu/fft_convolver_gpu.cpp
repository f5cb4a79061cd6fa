#include "clean/gpu/fft_convolver_gpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "clean/fft_convolver_cpu.hpp"

namespace gpuclean::clean::gpu {
namespace {

struct Geometry {
  PaddedLayout layout;
  KernelPlacement placement;
};

// The same offsets and padding as FftConvolverCpu: only |d| < size reaches an output pixel.
Geometry geometry(std::size_t kw, std::size_t kh, std::size_t cx, std::size_t cy, std::size_t width,
                  std::size_t height) {
  Geometry g;
  const auto w = static_cast<std::ptrdiff_t>(width), h = static_cast<std::ptrdiff_t>(height);
  KernelPlacement& k = g.placement;
  k.kernel_width = kw;
  k.cx = static_cast<std::ptrdiff_t>(cx);
  k.cy = static_cast<std::ptrdiff_t>(cy);
  k.dx_min = std::max(-k.cx, -(w - 1));
  k.dx_max = std::min(static_cast<std::ptrdiff_t>(kw) - 1 - k.cx, w - 1);
  k.dy_min = std::max(-k.cy, -(h - 1));
  k.dy_max = std::min(static_cast<std::ptrdiff_t>(kh) - 1 - k.cy, h - 1);
  PaddedLayout& l = g.layout;
  l.width = width;
  l.height = height;
  l.pw = fft_friendly_size(width + static_cast<std::size_t>(std::max(k.dx_max, -k.dx_min)));
  l.ph = fft_friendly_size(height + static_cast<std::size_t>(std::max(k.dy_max, -k.dy_min)));
  l.pitch = 2 * (l.pw / 2 + 1);
  k.scale = 1.0f / static_cast<float>(l.pw * l.ph);
  return g;
}

}  // namespace

std::size_t FftConvolverGpu::bytes_needed(std::size_t kw, std::size_t kh, std::size_t cx, std::size_t cy,
                                          std::size_t width, std::size_t height) {
  const PaddedLayout l = geometry(kw, kh, cx, cy, width, height).layout;
  const std::size_t spectrum = l.ph * (l.pw / 2 + 1) * sizeof(cufftComplex);
  std::size_t work = 0;
  check_cufft(cufftEstimate2d(static_cast<int>(l.ph), static_cast<int>(l.pw), CUFFT_R2C, &work), "cufftEstimate2d");
  return 2 * spectrum + work;
}

FftConvolverGpu::FftConvolverGpu(FftPlanCache& plans, cudaStream_t stream, const float* kernel, std::size_t kw, std::size_t kh,
                                 std::size_t cx, std::size_t cy, std::size_t width, std::size_t height)
    : stream_(stream) {
  const Geometry g = geometry(kw, kh, cx, cy, width, height);
  layout_ = g.layout;
  spectrum_count_ = layout_.ph * (layout_.pw / 2 + 1);
  buffer_ = cuda::DeviceBuffer<cufftComplex>(spectrum_count_, stream_);
  kernel_spectrum_ = cuda::DeviceBuffer<cufftComplex>(spectrum_count_, stream_);
  plans_ = &plans.get(stream_, layout_.pw, layout_.ph);
  // The kernel's spectrum, scaled by 1 / (pw ph) for cuFFT's unnormalised inverse.
  KernelPlacement k = g.placement;
  k.kernel = kernel;
  float* real = reinterpret_cast<float*>(buffer_.data());
  place_kernel(stream_, k, layout_, real);
  // In place, as every transform here: cuFFT reads padded rows only when input and output alias.
  check_cufft(cufftExecR2C(plans_->forward, real, buffer_.data()), "cufftExecR2C (kernel)");
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(kernel_spectrum_.data(), buffer_.data(), spectrum_count_ * sizeof(cufftComplex),
                                    cudaMemcpyDeviceToDevice, stream_));
}

void FftConvolverGpu::convolve(const float* image) {
  float* real = reinterpret_cast<float*>(buffer_.data());
  pad_image(stream_, image, layout_, real);
  check_cufft(cufftExecR2C(plans_->forward, real, buffer_.data()), "cufftExecR2C");
  multiply_spectra(stream_, buffer_.data(), kernel_spectrum_.data(), spectrum_count_);
  check_cufft(cufftExecC2R(plans_->inverse, buffer_.data(), real), "cufftExecC2R");
}

void FftConvolverGpu::subtract_from(float* residual, const std::uint8_t* mask, float* masked) {
  subtract_convolved(stream_, reinterpret_cast<const float*>(buffer_.data()), layout_, residual, mask, masked);
}

void FftConvolverGpu::add_to(const float* add, float* out) {
  add_convolved(stream_, reinterpret_cast<const float*>(buffer_.data()), layout_, add, out);
}

}  // namespace gpuclean::clean::gpu

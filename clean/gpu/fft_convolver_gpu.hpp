#pragma once
// Linear (zero-padded) 2-D convolution with a fixed kernel on the GPU through cuFFT: the GPU
// twin of FftConvolverCpu, with the same padding rule, so both paths subtract the same thing.
// The kernel's transform is computed once; each convolution is pad, R2C, multiply, C2R, in
// place in one buffer.

#include <cufft.h>

#include <cstddef>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_plan_cache.hpp"
#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean::gpu {

class FftConvolverGpu {
 public:
  /// `kernel` (device, kernel_width x kernel_height) has its zero offset at (cx, cy); images are
  /// width x height. out(x) = sum_d in(x - d) * kernel(c + d). The kernel is not kept; the
  /// plans come from `plans` (which must outlive this convolver).
  FftConvolverGpu(FftPlanCache& plans, cudaStream_t stream, const float* kernel, std::size_t kernel_width, std::size_t kernel_height,
                  std::size_t cx, std::size_t cy, std::size_t width, std::size_t height);
  FftConvolverGpu(const FftConvolverGpu&) = delete;
  FftConvolverGpu& operator=(const FftConvolverGpu&) = delete;

  /// Convolves `image` (device, width x height, no NaN); the result stays in the padded buffer,
  /// read by subtract_from() or add_to().
  void convolve(const float* image);
  /// residual -= result; masked = mask ? residual : NaN.
  void subtract_from(float* residual, const std::uint8_t* mask, float* masked);
  /// out = result + add.
  void add_to(const float* add, float* out);

  const PaddedLayout& layout() const { return layout_; }

  /// Device bytes a convolver of this geometry holds, cuFFT's work area included.
  static std::size_t bytes_needed(std::size_t kernel_width, std::size_t kernel_height, std::size_t cx,
                                  std::size_t cy, std::size_t width, std::size_t height);

 private:
  cudaStream_t stream_;
  PaddedLayout layout_;
  std::size_t spectrum_count_ = 0;
  cuda::DeviceBuffer<cufftComplex> buffer_;          // in-place real/complex work array
  cuda::DeviceBuffer<cufftComplex> kernel_spectrum_;
  FftPlans* plans_ = nullptr;
};

}  // namespace gpuclean::clean::gpu

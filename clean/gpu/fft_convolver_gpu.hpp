#pragma once
// Linear (zero-padded) 2-D convolution with a fixed kernel on the GPU through cuFFT: the GPU
// twin of FftConvolverCpu, with the same padding rule, so both paths subtract the same thing.
// The kernel's transform (a Spectrum, which GpuResources caches across runs) is made once;
// each convolution is pad, R2C, multiply, C2R, in place in one buffer.

#include <cufft.h>

#include <cstddef>
#include <memory>

#include "clean/beam.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_plan_cache.hpp"
#include "clean/gpu/spectrum_cache.hpp"
#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean::gpu {

/// The padded layout of a convolution of width x height images with a kw x kh kernel whose
/// zero offset is (cx, cy): only offsets |d| < size reach an output pixel, as on the CPU.
PaddedLayout padded_layout(std::size_t kw, std::size_t kh, std::size_t cx, std::size_t cy, std::size_t width,
                           std::size_t height);

/// The spectrum of `kernel` (device, kw x kh, zero offset (cx, cy)) for width x height images,
/// enqueued on `compute` with plans from `plans` (bound to `compute`), freed on `release`.
/// `kernel` must stay valid until the work enqueued on `compute` has run.
std::shared_ptr<Spectrum> kernel_spectrum(FftPlanCache& plans, cudaStream_t compute, cudaStream_t release,
                                          const float* kernel, std::size_t kw, std::size_t kh, std::size_t cx,
                                          std::size_t cy, std::size_t width, std::size_t height);

/// The restoring beam's spectrum for width x height images: clean::gaussian_kernel(g, 2 width
/// - 1, 2 height - 1) placed by its centre, but generated on the device straight into the
/// transform's buffer, padded at least as a centred image-sized kernel is (so that the beams of
/// one image size share one layout). Enqueued on `stream`, which also frees it.
std::shared_ptr<Spectrum> gaussian_spectrum(FftPlanCache& plans, cudaStream_t stream, const PixelGaussian& g,
                                            std::size_t width, std::size_t height);

/// What gaussian_spectrum() places, for `layout` (the padded layout of that convolution).
GaussianPlacement gaussian_placement(const PixelGaussian& g, std::size_t width, std::size_t height,
                                     const PaddedLayout& layout);

class FftConvolverGpu {
 public:
  /// Convolves on `stream` by `spectrum`, which may still be being computed on another stream
  /// (the first convolve() waits for it there, not on the host). Plans come from `plans`,
  /// which must outlive this convolver.
  FftConvolverGpu(FftPlanCache& plans, cudaStream_t stream, std::shared_ptr<const Spectrum> spectrum);
  /// `kernel` (device, kernel_width x kernel_height) has its zero offset at (cx, cy); images are
  /// width x height. out(x) = sum_d in(x - d) * kernel(c + d). The kernel is not kept.
  FftConvolverGpu(FftPlanCache& plans, cudaStream_t stream, const float* kernel, std::size_t kernel_width,
                  std::size_t kernel_height, std::size_t cx, std::size_t cy, std::size_t width, std::size_t height);
  FftConvolverGpu(const FftConvolverGpu&) = delete;
  FftConvolverGpu& operator=(const FftConvolverGpu&) = delete;

  /// Convolves `image` (device, width x height, no NaN); the result stays in the padded buffer,
  /// read by subtract_from() or add_to().
  void convolve(const float* image);
  /// residual -= result; masked = mask ? residual : NaN.
  void subtract_from(float* residual, const std::uint8_t* mask, float* masked);
  /// out = result + add (add may be null: out = result).
  void add_to(const float* add, float* out);
  /// masked = result where `mask` is set at least `border` pixels from every edge, NaN elsewhere.
  void mask_to(const std::uint8_t* mask, std::size_t border, float* masked);

  const PaddedLayout& layout() const { return spectrum_->layout(); }
  /// From the next convolve() on, convolve by `spectrum` (of the same layout), keeping this
  /// convolver's buffer and plans: a joined run's planes share one.
  void set_spectrum(std::shared_ptr<const Spectrum> spectrum);

  /// Device bytes of the transform's layout: one spectrum, or the working buffer.
  static std::size_t spectrum_bytes(std::size_t kernel_width, std::size_t kernel_height, std::size_t cx,
                                    std::size_t cy, std::size_t width, std::size_t height);
  /// cuFFT's work area for that layout.
  static std::size_t work_bytes(std::size_t kernel_width, std::size_t kernel_height, std::size_t cx,
                                std::size_t cy, std::size_t width, std::size_t height);
  /// The same two for the restoring beam `g` (gaussian_spectrum's layout).
  static std::size_t restoring_spectrum_bytes(const PixelGaussian& g, std::size_t width, std::size_t height);
  static std::size_t restoring_work_bytes(const PixelGaussian& g, std::size_t width, std::size_t height);
  /// Device bytes a convolver of this geometry holds with its own spectrum, cuFFT's work area
  /// included.
  static std::size_t bytes_needed(std::size_t kernel_width, std::size_t kernel_height, std::size_t cx,
                                  std::size_t cy, std::size_t width, std::size_t height);

 private:
  cudaStream_t stream_;
  std::shared_ptr<const Spectrum> spectrum_;
  cuda::DeviceBuffer<cufftComplex> buffer_;  // in-place real/complex work array
  std::shared_ptr<FftPlans> plans_;  // kept even if the cache drops them
  bool joined_ = false;  // the stream has waited for the spectrum
};

}  // namespace gpuclean::clean::gpu

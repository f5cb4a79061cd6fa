#pragma once
// Linear (zero-padded, not circular) 2-D convolution with a fixed kernel, through FFTW's
// threaded single-precision real transforms. The kernel's transform is computed once.

#include <fftw3.h>

#include <cstddef>

#include "clean/host_image.hpp"

namespace gpuclean::clean {

class FftConvolverCpu {
 public:
  /// `kernel` has its reference (zero-offset) pixel at (cx, cy); images are width x height.
  /// out(x) = sum_d in(x - d) * kernel(c + d), for every d the kernel holds.
  FftConvolverCpu(const HostImage& kernel, std::size_t cx, std::size_t cy, std::size_t width,
                  std::size_t height, int threads);
  ~FftConvolverCpu();
  FftConvolverCpu(const FftConvolverCpu&) = delete;
  FftConvolverCpu& operator=(const FftConvolverCpu&) = delete;

  /// out = in (x) kernel, cropped to width x height. `in` must hold no NaN; in and out may alias.
  void convolve(const float* in, float* out);

  std::size_t padded_width() const { return pw_; }
  std::size_t padded_height() const { return ph_; }

 private:
  std::size_t width_, height_, pw_, ph_;
  float* real_ = nullptr;
  fftwf_complex* spec_ = nullptr;
  fftwf_complex* kernel_spec_ = nullptr;
  fftwf_plan forward_ = nullptr;
  fftwf_plan inverse_ = nullptr;
};

/// The smallest n' >= n whose only prime factors are 2, 3, 5 and 7 (FFTW's fast sizes).
std::size_t fft_friendly_size(std::size_t n);

}  // namespace gpuclean::clean

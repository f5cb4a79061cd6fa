#pragma once
// A real P x P FFTW buffer, its half-plane spectrum and their forward and inverse plans: the
// simulators' FFT workspace. One per thread: a worker that simulates several channels keeps one
// and reuses it (the buffers are hundreds of MB at 4096^2; allocating them per transform costs
// the kernel's page zeroing each time).

#include <cstddef>

struct fftwf_plan_s;  // fftw3.h's plan type, kept out of this header

namespace gpuclean::data {

class Fft2d {
 public:
  /// Plans (FFTW_ESTIMATE, under the program's one planner mutex) with `threads` FFTW threads.
  Fft2d(std::size_t p, int threads);
  ~Fft2d();
  Fft2d(const Fft2d&) = delete;
  Fft2d& operator=(const Fft2d&) = delete;

  std::size_t size() const { return p_; }
  float* real() { return real_; }  ///< P x P
  float* spec() { return spec_; }  ///< P x (P/2 + 1) complex values, (re, im) interleaved
  void forward();                  ///< real -> spec
  void inverse();                  ///< spec -> real (unnormalised; overwrites spec)

 private:
  std::size_t p_;
  float* real_ = nullptr;
  float* spec_ = nullptr;
  fftwf_plan_s* fwd_ = nullptr;
  fftwf_plan_s* inv_ = nullptr;
};

}  // namespace gpuclean::data

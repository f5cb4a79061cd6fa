#include "data/fft2d.hpp"

#include <fftw3.h>

#include <mutex>
#include <new>

#include "fftw/planner_mutex.hpp"

namespace gpuclean::data {

Fft2d::Fft2d(std::size_t p, int threads) : p_(p) {
  real_ = static_cast<float*>(fftwf_malloc(sizeof(float) * p * p));
  spec_ = static_cast<float*>(fftwf_malloc(sizeof(fftwf_complex) * p * (p / 2 + 1)));
  if (!real_ || !spec_) {
    fftwf_free(real_);
    fftwf_free(spec_);
    throw std::bad_alloc();
  }
  // FFTW's planner is not thread-safe: the program's one planner mutex (fftw/planner_mutex.hpp).
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  static std::once_flag once;
  std::call_once(once, [] { fftwf_init_threads(); });
  fftwf_plan_with_nthreads(threads < 1 ? 1 : threads);
  const int n = static_cast<int>(p);
  auto* spec = reinterpret_cast<fftwf_complex*>(spec_);
  fwd_ = fftwf_plan_dft_r2c_2d(n, n, real_, spec, FFTW_ESTIMATE);
  inv_ = fftwf_plan_dft_c2r_2d(n, n, spec, real_, FFTW_ESTIMATE);
}

Fft2d::~Fft2d() {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  if (fwd_) fftwf_destroy_plan(fwd_);
  if (inv_) fftwf_destroy_plan(inv_);
  fftwf_free(real_);
  fftwf_free(spec_);
}

void Fft2d::forward() { fftwf_execute(fwd_); }
void Fft2d::inverse() { fftwf_execute(inv_); }

}  // namespace gpuclean::data

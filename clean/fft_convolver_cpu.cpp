#include "clean/fft_convolver_cpu.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include <omp.h>

#include "fftw/planner_mutex.hpp"

namespace gpuclean::clean {
namespace {

// FFTW's planner is not thread-safe (the program's one mutex: fftw/planner_mutex.hpp), and its
// thread support is initialised once per process.
std::mutex& planner_mutex() { return fftw_planner_mutex(); }

void init_fftw_threads() {
  static std::once_flag once;
  std::call_once(once, [] { fftwf_init_threads(); });
}

template <class T>
T* fftw_alloc(std::size_t count) {
  void* p = fftwf_malloc(sizeof(T) * count);
  if (!p) throw std::bad_alloc();
  return static_cast<T*>(p);
}

}  // namespace

std::size_t fft_friendly_size(std::size_t n) {
  for (std::size_t m = std::max<std::size_t>(n, 1);; ++m) {
    std::size_t r = m;
    for (std::size_t p : {2, 3, 5, 7}) {
      while (r % p == 0) r /= p;
    }
    if (r == 1) return m;
  }
}

FftConvolverCpu::FftConvolverCpu(const HostImage& kernel, std::size_t cx, std::size_t cy,
                                 std::size_t width, std::size_t height, int threads)
    : width_(width), height_(height) {
  // Only offsets |d| < size can reach an output pixel; the kernel is cropped to those.
  const auto w = static_cast<std::ptrdiff_t>(width);
  const auto h = static_cast<std::ptrdiff_t>(height);
  const std::ptrdiff_t dx_min = std::max(-static_cast<std::ptrdiff_t>(cx), -(w - 1));
  const std::ptrdiff_t dx_max = std::min(static_cast<std::ptrdiff_t>(kernel.width - 1 - cx), w - 1);
  const std::ptrdiff_t dy_min = std::max(-static_cast<std::ptrdiff_t>(cy), -(h - 1));
  const std::ptrdiff_t dy_max = std::min(static_cast<std::ptrdiff_t>(kernel.height - 1 - cy), h - 1);
  // Padding of size + max|d| keeps every wrapped-around term outside the output window.
  pw_ = fft_friendly_size(width + static_cast<std::size_t>(std::max(dx_max, -dx_min)));
  ph_ = fft_friendly_size(height + static_cast<std::size_t>(std::max(dy_max, -dy_min)));
  const std::size_t nreal = pw_ * ph_;
  const std::size_t nspec = ph_ * (pw_ / 2 + 1);
  real_ = fftw_alloc<float>(nreal);
  spec_ = fftw_alloc<fftwf_complex>(nspec);
  kernel_spec_ = fftw_alloc<fftwf_complex>(nspec);
  {
    std::lock_guard<std::mutex> lock(planner_mutex());
    init_fftw_threads();
    fftwf_plan_with_nthreads(threads > 0 ? threads : omp_get_max_threads());
    forward_ = fftwf_plan_dft_r2c_2d(static_cast<int>(ph_), static_cast<int>(pw_), real_, spec_, FFTW_ESTIMATE);
    inverse_ = fftwf_plan_dft_c2r_2d(static_cast<int>(ph_), static_cast<int>(pw_), spec_, real_, FFTW_ESTIMATE);
  }
  if (!forward_ || !inverse_) throw std::bad_alloc();

  // Kernel with its zero offset at the origin (negative offsets wrap), scaled by 1/N for the
  // unnormalised inverse transform.
  std::fill(real_, real_ + nreal, 0.0f);
  const float scale = 1.0f / static_cast<float>(nreal);
  for (std::ptrdiff_t dy = dy_min; dy <= dy_max; ++dy) {
    const std::size_t py = static_cast<std::size_t>((dy + static_cast<std::ptrdiff_t>(ph_)) % static_cast<std::ptrdiff_t>(ph_));
    const std::size_t ky = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(cy) + dy);
    for (std::ptrdiff_t dx = dx_min; dx <= dx_max; ++dx) {
      const std::size_t px = static_cast<std::size_t>((dx + static_cast<std::ptrdiff_t>(pw_)) % static_cast<std::ptrdiff_t>(pw_));
      const std::size_t kx = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(cx) + dx);
      real_[py * pw_ + px] = kernel.at(kx, ky) * scale;
    }
  }
  fftwf_execute(forward_);
  std::memcpy(kernel_spec_, spec_, sizeof(fftwf_complex) * nspec);
}

FftConvolverCpu::~FftConvolverCpu() {
  std::lock_guard<std::mutex> lock(planner_mutex());
  if (forward_) fftwf_destroy_plan(forward_);
  if (inverse_) fftwf_destroy_plan(inverse_);
  fftwf_free(real_);
  fftwf_free(spec_);
  fftwf_free(kernel_spec_);
}

void FftConvolverCpu::convolve(const float* in, float* out) {
  std::fill(real_, real_ + pw_ * ph_, 0.0f);
  for (std::size_t y = 0; y < height_; ++y) {
    std::memcpy(real_ + y * pw_, in + y * width_, sizeof(float) * width_);
  }
  fftwf_execute(forward_);
  const std::size_t nspec = ph_ * (pw_ / 2 + 1);
#pragma omp parallel for
  for (std::size_t i = 0; i < nspec; ++i) {
    const float ar = spec_[i][0], ai = spec_[i][1];
    const float br = kernel_spec_[i][0], bi = kernel_spec_[i][1];
    spec_[i][0] = ar * br - ai * bi;
    spec_[i][1] = ar * bi + ai * br;
  }
  fftwf_execute(inverse_);
  for (std::size_t y = 0; y < height_; ++y) {
    std::memcpy(out + y * width_, real_ + y * pw_, sizeof(float) * width_);
  }
}

}  // namespace gpuclean::clean

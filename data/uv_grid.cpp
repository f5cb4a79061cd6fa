#include "data/uv_grid.hpp"

#include <fftw3.h>
#include <omp.h>

#include <cmath>
#include <mutex>
#include <new>

#include "fftw/planner_mutex.hpp"

namespace gpuclean::data {
namespace {

// FFTW's planner is not thread-safe: the program's one planner mutex (fftw/planner_mutex.hpp).
std::mutex& planner_mutex() { return fftw_planner_mutex(); }

// Owns one real P x P buffer and its half-plane spectrum, with forward and inverse plans.
class Fft2d {
 public:
  explicit Fft2d(std::size_t p) : p_(p) {
    real_ = static_cast<float*>(fftwf_malloc(sizeof(float) * p * p));
    spec_ = static_cast<fftwf_complex*>(fftwf_malloc(sizeof(fftwf_complex) * p * (p / 2 + 1)));
    if (!real_ || !spec_) throw std::bad_alloc();
    std::lock_guard<std::mutex> lock(planner_mutex());
    static std::once_flag once;
    std::call_once(once, [] { fftwf_init_threads(); });
    fftwf_plan_with_nthreads(omp_get_max_threads());
    const int n = static_cast<int>(p);
    fwd_ = fftwf_plan_dft_r2c_2d(n, n, real_, spec_, FFTW_ESTIMATE);
    inv_ = fftwf_plan_dft_c2r_2d(n, n, spec_, real_, FFTW_ESTIMATE);
  }
  ~Fft2d() {
    std::lock_guard<std::mutex> lock(planner_mutex());
    fftwf_destroy_plan(fwd_);
    fftwf_destroy_plan(inv_);
    fftwf_free(real_);
    fftwf_free(spec_);
  }
  Fft2d(const Fft2d&) = delete;
  Fft2d& operator=(const Fft2d&) = delete;
  float* real() { return real_; }
  fftwf_complex* spec() { return spec_; }
  void forward() { fftwf_execute(fwd_); }
  void inverse() { fftwf_execute(inv_); }

 private:
  std::size_t p_;
  float* real_;
  fftwf_complex* spec_;
  fftwf_plan fwd_, inv_;
};

}  // namespace

UvGrid::UvGrid(const std::vector<UvSample>& samples, std::size_t image_size, double cell_rad, const Weighting& weighting)
    : n_(image_size), p_(2 * image_size), weights_(p_ * (p_ / 2 + 1), 0.0f), noise_weights_(weights_.size(), 0.0f) {
  // uv cell of a P-pixel grid with pixels of cell_rad.
  const double du = 1.0 / (static_cast<double>(p_) * cell_rad);
  const auto half = static_cast<long long>(p_ / 2);
  const auto p = static_cast<long long>(p_);
  const std::size_t hw = p_ / 2 + 1;
  auto add = [&](double u, double v) {
    // Image x runs against RA (east is -x), so u maps to negative x frequencies.
    long long iu = std::llround(-u / du);
    long long iv = std::llround(v / du);
    if (iu < 0) {  // keep the Hermitian half plane iu >= 0
      iu = -iu;
      iv = -iv;
    }
    weights_[static_cast<std::size_t>((iv + p) % p) * hw + static_cast<std::size_t>(iu)] += 1.0f;
    // On the iu = 0 column both halves are stored explicitly.
    if (iu == 0) weights_[static_cast<std::size_t>((-iv + p) % p) * hw] += 1.0f;
  };
  for (const auto& s : samples) {
    if (std::abs(s.u) >= (half - 1) * du || std::abs(s.v) >= (half - 1) * du) {
      ++dropped_;
      continue;
    }
    add(s.u, s.v);
    ++gridded_;
  }
  // Each sample stands for itself and its conjugate: the (iu > 0) half carries one count per
  // sample and the c2r transform supplies the mirror image; the iu = 0 column has both. Sums over
  // the whole plane therefore count the other columns twice.
  const auto plane_factor = [&](std::size_t iu) { return (iu == 0 || iu == p_ / 2) ? 1.0 : 2.0; };
  double sum = 0.0, sum_squares = 0.0;
  for (std::size_t iv = 0; iv < p_; ++iv) {
    for (std::size_t iu = 0; iu < hw; ++iu) {
      const double c = weights_[iv * hw + iu];
      sum += plane_factor(iu) * c;
      sum_squares += plane_factor(iu) * c * c;
    }
  }
  const SampleWeight sample_weight(weighting, sum, sum_squares);
  weight_sum_ = 0.0;
  for (std::size_t iv = 0; iv < p_; ++iv) {
    for (std::size_t iu = 0; iu < hw; ++iu) {
      const std::size_t i = iv * hw + iu;
      const double c = weights_[i];
      if (c == 0.0) continue;
      const double each = sample_weight(c);
      weights_[i] = static_cast<float>(c * each);
      noise_weights_[i] = static_cast<float>(std::sqrt(c) * each);
      weight_sum_ += plane_factor(iu) * c * each;
    }
  }
}

std::vector<float> UvGrid::weighted_inverse(const std::vector<float>& image_2n, const std::vector<float>& weights) const {
  Fft2d fft(p_);
  std::copy(image_2n.begin(), image_2n.end(), fft.real());
  fft.forward();
  const std::size_t ns = p_ * (p_ / 2 + 1);
  fftwf_complex* s = fft.spec();
  const float inv_p2 = 1.0f / static_cast<float>(p_ * p_);
  for (std::size_t i = 0; i < ns; ++i) {
    const float w = weights[i] * inv_p2;
    s[i][0] *= w;
    s[i][1] *= w;
  }
  fft.inverse();
  std::vector<float> out(n_ * n_);
  for (std::size_t y = 0; y < n_; ++y)
    for (std::size_t x = 0; x < n_; ++x) out[y * n_ + x] = fft.real()[y * p_ + x];
  return out;
}

std::vector<float> UvGrid::psf() const {
  // A unit point at (N/2, N/2) of the 2N grid images to the PSF centred there.
  std::vector<float> point(p_ * p_, 0.0f);
  point[(n_ / 2) * p_ + n_ / 2] = 1.0f;
  std::vector<float> out = weighted_inverse(point, weights_);
  const float peak = out[(n_ / 2) * n_ + n_ / 2];
  for (float& v : out) v /= peak;
  return out;
}

std::vector<float> UvGrid::dirty(const std::vector<float>& sky) const {
  std::vector<float> padded(p_ * p_, 0.0f);
  for (std::size_t y = 0; y < n_; ++y)
    for (std::size_t x = 0; x < n_; ++x) padded[y * p_ + x] = sky[y * n_ + x];
  std::vector<float> out = weighted_inverse(padded, weights_);
  // The PSF's normalisation: a unit point source gives a unit peak (the PSF's origin value is
  // sum(W) / P^2).
  const double peak = weight_sum_ / static_cast<double>(p_ * p_);
  for (float& v : out) v = static_cast<float>(v / peak);
  return out;
}

std::vector<float> UvGrid::noise(Rng& rng, double rms) const {
  std::vector<float> white(p_ * p_);
  for (float& v : white) v = static_cast<float>(rng.normal());
  std::vector<float> out = weighted_inverse(white, noise_weights_);
  double sum = 0.0;
  for (float v : out) sum += static_cast<double>(v) * v;
  const double now = std::sqrt(sum / static_cast<double>(out.size()));
  const float scale = now > 0.0 ? static_cast<float>(rms / now) : 0.0f;
  for (float& v : out) v *= scale;
  return out;
}

void psf_half_power_widths(const std::vector<float>& psf, std::size_t n, double* fwhm_x, double* fwhm_y) {
  const auto c = static_cast<long>(n / 2);
  const auto at = [&](long x, long y) { return static_cast<double>(psf[static_cast<std::size_t>(y) * n + static_cast<std::size_t>(x)]); };
  auto width = [&](long ux, long uy) {
    double total = 0.0;
    for (long dir : {-1L, 1L}) {
      for (long step = 1; step < c; ++step) {
        const double v = at(c + dir * step * ux, c + dir * step * uy);
        if (v < 0.5) {
          const double prev = at(c + dir * (step - 1) * ux, c + dir * (step - 1) * uy);
          total += static_cast<double>(step - 1) + (prev - 0.5) / (prev - v);
          break;
        }
      }
    }
    return total;
  };
  *fwhm_x = width(1, 0);
  *fwhm_y = width(0, 1);
}

}  // namespace gpuclean::data

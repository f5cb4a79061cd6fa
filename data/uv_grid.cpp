#include "data/uv_grid.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace gpuclean::data {
namespace {

// The workspace to use: the caller's, or `own`, made here for every core.
Fft2d& workspace_for(Fft2d* given, std::unique_ptr<Fft2d>& own, std::size_t p) {
  if (given) {
    if (given->size() != p) throw std::invalid_argument("UvGrid: the FFT workspace is not 2N x 2N.");
    return *given;
  }
  own = std::make_unique<Fft2d>(p, omp_get_max_threads());
  return *own;
}

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

template <class Fill>
std::vector<float> UvGrid::weighted_inverse(Fill&& fill, const std::vector<float>& weights, Fft2d* workspace) const {
  std::unique_ptr<Fft2d> own;
  Fft2d& fft = workspace_for(workspace, own, p_);
  fill(fft.real());
  fft.forward();
  const std::size_t ns = p_ * (p_ / 2 + 1);
  float* s = fft.spec();
  const float inv_p2 = 1.0f / static_cast<float>(p_ * p_);
  for (std::size_t i = 0; i < ns; ++i) {
    const float w = weights[i] * inv_p2;
    s[2 * i] *= w;
    s[2 * i + 1] *= w;
  }
  fft.inverse();
  std::vector<float> out(n_ * n_);
  const float* real = fft.real();
  for (std::size_t y = 0; y < n_; ++y) std::copy_n(real + y * p_, n_, out.begin() + static_cast<std::ptrdiff_t>(y * n_));
  return out;
}

std::vector<float> UvGrid::psf(Fft2d* workspace) const {
  // A unit point at (N/2, N/2) of the 2N grid images to the PSF centred there.
  const auto point = [&](float* real) {
    std::fill_n(real, p_ * p_, 0.0f);
    real[(n_ / 2) * p_ + n_ / 2] = 1.0f;
  };
  std::vector<float> out = weighted_inverse(point, weights_, workspace);
  const float peak = out[(n_ / 2) * n_ + n_ / 2];
  for (float& v : out) v /= peak;
  return out;
}

std::vector<float> UvGrid::dirty(const std::vector<float>& sky, Fft2d* workspace) const {
  // The sky in the 2N grid's first N x N corner, zeros elsewhere.
  const auto padded = [&](float* real) {
    std::fill_n(real, p_ * p_, 0.0f);
    for (std::size_t y = 0; y < n_; ++y) std::copy_n(sky.data() + y * n_, n_, real + y * p_);
  };
  std::vector<float> out = weighted_inverse(padded, weights_, workspace);
  // The PSF's normalisation: a unit point source gives a unit peak (the PSF's origin value is
  // sum(W) / P^2).
  const double peak = weight_sum_ / static_cast<double>(p_ * p_);
  for (float& v : out) v = static_cast<float>(v / peak);
  return out;
}

std::vector<float> UvGrid::noise(Rng& rng, double rms, Fft2d* workspace) const {
  const auto white = [&](float* real) {
    for (std::size_t i = 0; i < p_ * p_; ++i) real[i] = static_cast<float>(rng.normal());
  };
  std::vector<float> out = weighted_inverse(white, noise_weights_, workspace);
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

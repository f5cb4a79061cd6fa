#pragma once
// Weighted gridding of uv samples (natural, uniform or Briggs; data/weighting.hpp) and the images
// it implies: the PSF, the dirty image of a sky, and visibility noise seen through the same weights.
//
// The grid is twice the image size, so that the PSF reaches every offset an N x N image can
// have and the dirty image is the *linear* convolution of the sky with that PSF. The PSF written
// out is its central N x N part, peak 1 at (N/2, N/2), as WSClean writes it.

#include <cstddef>
#include <vector>

#include "data/fft2d.hpp"
#include "data/rng.hpp"
#include "data/uv_coverage.hpp"
#include "data/weighting.hpp"

namespace gpuclean::data {

class UvGrid {
 public:
  /// `image_size` N, pixel size [rad]; samples beyond the grid's reach are counted and dropped.
  /// Every sample has the same data weight; `weighting` sets its imaging weight from its cell's.
  UvGrid(const std::vector<UvSample>& samples, std::size_t image_size, double cell_rad, const Weighting& weighting);

  std::size_t dropped_samples() const { return dropped_; }
  std::size_t gridded_samples() const { return gridded_; }
  /// The imaging weights of the gridded samples and their conjugates, summed (WSClean's WSCIMGWG).
  double weight_sum() const { return weight_sum_; }

  // Each image below takes an FFT workspace of size 2N (fft_size()) to reuse; without one it
  // makes its own, planned for omp_get_max_threads() threads. Either gives the same bits.

  std::size_t fft_size() const { return p_; }
  /// N x N, peak 1 at (N/2, N/2).
  std::vector<float> psf(Fft2d* workspace = nullptr) const;
  /// The dirty image of a sky given in Jy/pixel (N x N): sky (x) PSF, linear.
  std::vector<float> dirty(const std::vector<float>& sky, Fft2d* workspace = nullptr) const;
  /// Thermal noise: white visibility noise weighted like the data, scaled to `rms` Jy/beam.
  std::vector<float> noise(Rng& rng, double rms, Fft2d* workspace = nullptr) const;

 private:
  // Fills the workspace's 2N x 2N real buffer with `fill`, weights its spectrum and returns the
  // inverse's N x N corner.
  template <class Fill>
  std::vector<float> weighted_inverse(Fill&& fill, const std::vector<float>& weights, Fft2d* workspace) const;
  std::size_t n_, p_;
  // p_ x (p_/2 + 1), Hermitian half plane: the cell's imaging weight (samples x weight each), and
  // the RMS its noise gets (sqrt(samples) x weight each).
  std::vector<float> weights_, noise_weights_;
  double weight_sum_ = 0.0;
  std::size_t dropped_ = 0, gridded_ = 0;
};

/// Full width at half maximum of the PSF's main lobe along x and y [pixels] (linear
/// interpolation of the half-power crossing).
void psf_half_power_widths(const std::vector<float>& psf, std::size_t n, double* fwhm_x, double* fwhm_y);

}  // namespace gpuclean::data

#pragma once
// A simulated sky: point sources with power-law fluxes and a few elliptical Gaussians.

#include <cstddef>
#include <string>
#include <vector>

#include "data/rng.hpp"

namespace gpuclean::data {

struct SkySource {
  enum class Kind { kPoint, kGaussian } kind = Kind::kPoint;
  double x = 0, y = 0;     ///< pixel position (points sit on pixel centres)
  double flux = 0;         ///< total flux [Jy]
  double fwhm_major_px = 0, fwhm_minor_px = 0, pa_deg = 0;  ///< Gaussians only (PA from +y through -x)
};

struct SkySettings {
  std::size_t size = 512;
  std::size_t points = 60;
  std::size_t gaussians = 3;
  double min_flux = 1e-3;          ///< Jy
  double max_flux = 0.5;           ///< Jy
  double power_law_index = 2.0;    ///< dN/dS ~ S^-index
  double beam_fwhm_px = 4.0;       ///< scale of the Gaussians
  double gaussian_min_beams = 1.5; ///< a Gaussian's major FWHM, in beams, is drawn from this range
  double gaussian_max_beams = 4.0;
  /// A Gaussian's integrated flux [Jy], log-uniform in this range; 0, 0: 5 x a point source's
  /// flux (the power law). Either draw takes one number from the generator.
  double gaussian_min_flux = 0.0, gaussian_max_flux = 0.0;
  double edge_fraction = 0.1;      ///< sources stay this far (fraction of the size) from the edge
};

std::vector<SkySource> random_sky(const SkySettings& settings, Rng& rng);

/// The sky in Jy/pixel on an N x N grid; Gaussians are sampled at pixel centres and
/// normalised to their total flux.
std::vector<float> render_sky(const std::vector<SkySource>& sources, std::size_t n);

}  // namespace gpuclean::data

#pragma once
// A small analytic wideband observation for joined-channel tests: channel c at frequency nu_c
// has a sidelobed Gaussian PSF whose width scales as nu_0 / nu_c (as an array's resolution does),
// and point or Gaussian sources of flux S_0 (nu / nu_0)^alpha, convolved exactly (double
// precision).

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/psf.hpp"
#include "tests/support/synthetic.hpp"

namespace gpuclean::test {

struct SpectralSource {
  std::size_t x, y;
  double flux_ref;     ///< Jy at the reference frequency (integrated, for a Gaussian)
  double alpha;
  double sigma = 0.0;  ///< a circular Gaussian this wide (pixels), or 0: a point
};

struct SyntheticCube {
  double ref_hz = 1.4e9;
  std::vector<double> freqs;
  std::vector<SpectralSource> sources;
  std::vector<clean::HostImage> dirty;
  std::vector<clean::PreparedPsf> psf;
  clean::JoinedPlanes planes;  ///< points into dirty and psf: keep the cube where it was made

  double flux(const SpectralSource& s, std::size_t c) const { return s.flux_ref * std::pow(freqs[c] / ref_hz, s.alpha); }
};

/// `channels` equal channels over [ref - band/2, ref + band/2]; noise of `noise` Jy per pixel
/// (seeded) added to each channel.
inline void make_cube(SyntheticCube& cube, std::size_t n, std::size_t channels, double band_hz,
                      std::vector<SpectralSource> sources, double noise = 0.0, std::uint64_t seed = 7) {
  cube.sources = std::move(sources);
  cube.freqs.clear();
  cube.dirty.clear();
  cube.psf.clear();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  for (std::size_t c = 0; c < channels; ++c) {
    const double f = cube.ref_hz - 0.5 * band_hz + band_hz * (static_cast<double>(c) + 0.5) / static_cast<double>(channels);
    cube.freqs.push_back(f);
    const clean::HostImage p = sidelobed_psf(n, 2.0 * cube.ref_hz / f);
    cube.psf.push_back(clean::prepare_psf(p, n, n, nullptr));
    clean::HostImage sky(n, n);
    for (const auto& s : cube.sources) {
      if (s.sigma > 0.0) add_gaussian(sky, static_cast<double>(s.x), static_cast<double>(s.y), s.sigma, cube.flux(s, c));
      else sky.at(s.x, s.y) += static_cast<float>(cube.flux(s, c));
    }
    clean::HostImage d = convolve_direct(sky, cube.psf.back());
    if (noise > 0.0)
      for (float& v : d.pixels) v += static_cast<float>(noise * gauss(rng));
    cube.dirty.push_back(std::move(d));
  }
  cube.planes = {};
  cube.planes.join = clean::Join::kChannels;
  for (std::size_t c = 0; c < channels; ++c)
    cube.planes.planes.push_back({&cube.dirty[c], &cube.psf[c], cube.freqs[c], 1.0 + 0.1 * static_cast<double>(c)});
}

/// The unweighted least-squares slope of log S against log nu: a spectrum's spectral index.
inline double fitted_alpha(const std::vector<double>& flux, const std::vector<double>& freqs) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(flux.size());
  for (std::size_t c = 0; c < flux.size(); ++c) {
    const double x = std::log(freqs[c]), y = std::log(flux[c]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/// Sum over the components within `radius` pixels of (x, y) of their flux in each plane.
inline std::vector<double> plane_flux_near(const clean::CleanResult& r, std::size_t planes, std::size_t x,
                                           std::size_t y, double radius = 2.5) {
  std::vector<double> out(planes, 0.0);
  for (std::size_t k = 0; k < r.components.list.size(); ++k) {
    const double dx = static_cast<double>(r.components.list[k].x) - static_cast<double>(x);
    const double dy = static_cast<double>(r.components.list[k].y) - static_cast<double>(y);
    if (dx * dx + dy * dy > radius * radius) continue;
    for (std::size_t p = 0; p < planes; ++p) out[p] += r.components.plane_fluxes[k * planes + p];
  }
  return out;
}

}  // namespace gpuclean::test

#pragma once
// A CLEAN run's model as sources, as radler lists them: one source per pixel and scale, made of
// every component cleaned there, and, for a source list, its spectrum over the run's planes
// fitted as the run fitted them. app/ only formats and writes what these return.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"

namespace gpuclean::clean {

/// The components cleaned at one pixel on one scale.
struct ModelSource {
  std::uint32_t x = 0, y = 0;
  std::uint32_t scale = 0;               ///< index into CleanResult::components.scales
  std::vector<std::size_t> components;   ///< indices into CleanResult::components.list, in the order cleaned
};

/// One source per pixel and scale of `result`'s components, in the order each was first cleaned.
std::vector<ModelSource> model_sources(const CleanResult& result);

/// The source's flux in plane `plane` of the run's `planes` (1 for a run of one plane: then the
/// components' own fluxes), summed in double in the order cleaned.
double source_flux(const CleanResult& result, const ModelSource& source, std::size_t plane, std::size_t planes);

/// A source of a source list.
struct FittedSource {
  std::uint32_t x = 0, y = 0;
  std::uint32_t scale = 0;      ///< index into CleanResult::components.scales
  double fwhm_pixels = 0.0;     ///< its scale's Gaussian (scale_fwhm_pixels); 0 for a point source
  /// The fit's terms (S(nu_0) first; log_polynomial_fit.hpp's with a logarithmic fit), or, without
  /// a fit, one term: the planes' weighted mean flux.
  std::vector<double> terms;
};

/// `result`'s sources (model_sources' order) with their spectra over the run's planes, whose
/// frequencies and weights are given in the run's order. radler's rule: a source's terms are the
/// fit of its summed spectrum (for a polynomial, the sum of its components' terms), fitted as
/// `fit` asks at result.reference_frequency_hz; with fit.terms == 0, a flat spectrum at the
/// planes' weighted mean.
std::vector<FittedSource> fitted_sources(const CleanResult& result, const std::vector<double>& frequencies_hz,
                                         const std::vector<double>& weights, const SpectralFitSettings& fit);

/// The FWHM, in pixels, of the Gaussian that stands for a scale of `size` pixels in a source
/// list (radler's rule: its sigma is 3/16 of the scale); 0 for the delta scale.
double scale_fwhm_pixels(double size);

}  // namespace gpuclean::clean

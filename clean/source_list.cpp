#include "clean/source_list.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "clean/spectral_fit.hpp"

namespace gpuclean::clean {
namespace {

// Component k's flux in plane j of `planes` (joined runs keep every plane's, component-major).
float plane_flux(const CleanResult& r, std::size_t k, std::size_t j, std::size_t planes) {
  return planes > 1 ? r.components.plane_fluxes[k * planes + j] : r.components.list[k].flux;
}

}  // namespace

std::vector<ModelSource> model_sources(const CleanResult& r) {
  std::vector<ModelSource> sources;
  // Pixel and scale in one key: x and y take 24 bits each, the scale the bits above.
  std::unordered_map<std::uint64_t, std::size_t> source_of;
  for (std::size_t k = 0; k < r.components.list.size(); ++k) {
    const Component& c = r.components.list[k];
    const std::uint64_t key =
        (static_cast<std::uint64_t>(c.scale) << 48) | (static_cast<std::uint64_t>(c.y) << 24) | c.x;
    auto [it, inserted] = source_of.try_emplace(key, sources.size());
    if (inserted) sources.push_back({c.x, c.y, c.scale, {}});
    sources[it->second].components.push_back(k);
  }
  return sources;
}

double source_flux(const CleanResult& r, const ModelSource& source, std::size_t plane, std::size_t planes) {
  double flux = 0.0;
  for (std::size_t k : source.components) flux += plane_flux(r, k, plane, planes);
  return flux;
}

std::vector<FittedSource> fitted_sources(const CleanResult& r, const std::vector<double>& frequencies_hz,
                                         const std::vector<double>& weights, const SpectralFitSettings& fit) {
  const std::size_t np = frequencies_hz.size();
  std::optional<SpectralFit> fitter;
  if (fit.terms > 0) fitter.emplace(frequencies_hz, weights, fit.terms, r.components.reference_frequency_hz, fit.logarithmic);
  const double weight_sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<FittedSource> out;
  // The summed spectrum in float, as the fit's inputs are the planes' float fluxes.
  std::vector<float> spectrum(np);
  for (const ModelSource& s : model_sources(r)) {
    std::fill(spectrum.begin(), spectrum.end(), 0.0f);
    for (std::size_t k : s.components)
      for (std::size_t j = 0; j < np; ++j) spectrum[j] += plane_flux(r, k, j, np);
    FittedSource f{s.x, s.y, s.scale, 0.0, {}};
    if (fitter) {
      f.terms.resize(fit.terms);
      fitter->fit_terms(spectrum.data(), f.terms.data());
    } else {
      double mean = 0.0;
      for (std::size_t j = 0; j < np; ++j) mean += weights[j] * spectrum[j];
      f.terms = {mean / weight_sum};
    }
    f.fwhm_pixels = scale_fwhm_pixels(s.scale < r.components.scales.size() ? r.components.scales[s.scale].size : 0.0);
    out.push_back(std::move(f));
  }
  return out;
}

double scale_fwhm_pixels(double size) { return 2.0 * std::sqrt(2.0 * std::log(2.0)) * (3.0 / 16.0) * size; }

}  // namespace gpuclean::clean

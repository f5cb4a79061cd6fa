#pragma once
// --fit-spectral-pol N (WSClean's -fit-spectral-pol): each component's per-channel values are
// replaced by the weighted least-squares polynomial of N terms in frequency,
//   S(nu) = a_0 + a_1 (nu / nu_0 - 1) + ... + a_{N-1} (nu / nu_0 - 1)^{N-1},
// before it is subtracted, so that noise in single channels does not enter the model. The fit
// is linear in the values, so it is a fixed matrix: fitted = P v with P = A (A^T W A)^-1 A^T W,
// and the terms are T v with T = (A^T W A)^-1 A^T W (A: the polynomial's design matrix, W the
// channel weights). Both are made once in double and applied in float in a fixed order, so the
// CPU and GPU round the same; a component's terms are those of gain x its values, and the terms
// of a source (the sum of its components) are the sums of theirs.
//
// --fit-spectral-log-pol N (WSClean's -fit-spectral-log-pol) fits a logarithmic polynomial
// instead (log_polynomial_fit.hpp): not linear, so a source's terms are the fit of the sum of its
// components' values. That fit is unweighted, every channel counting alike, as WSClean's is
// (schaapcommon's SpectralFitter hands NonLinearPowerLawFitter no weights, WSClean 3.0 to 3.7)
// while its polynomial fit weighs by the channel weights.

#include <cstddef>
#include <optional>
#include <vector>

#include "clean/plane_set.hpp"

namespace gpuclean::clean {

class SpectralFit {
 public:
  /// `terms` at least 1 (and at most kMaxLogTerms when logarithmic); weights > 0. Throws
  /// InvalidSettings otherwise. More terms than channels fit as many terms as there are channels
  /// (terms() says how many), the others being 0, as WSClean's fitters do: callers that keep
  /// the count asked for (a source list's SpectralIndex) pass a buffer of it, zeroed.
  SpectralFit(std::vector<double> frequencies_hz, const std::vector<double>& weights, std::size_t terms,
              double reference_hz, bool logarithmic = false);

  std::size_t channels() const { return channels_; }
  std::size_t terms() const { return terms_; }
  double reference_hz() const { return reference_hz_; }
  bool logarithmic() const { return logarithmic_; }

  /// The fit at every channel: polynomial, fitted[c] = sum_j P[c][j] v[j], j ascending (float,
  /// no FMA); logarithmic, fit_log_polynomial().
  void fit(const float* v, float* fitted) const;
  /// The terms of the fit: polynomial, terms[k] = sum_j T[k][j] v[j] (double); logarithmic,
  /// S(nu_0), then the coefficients of log10(nu / nu_0)^1, ^2, ...
  void fit_terms(const float* v, double* terms) const;
  /// The fitted spectrum with `terms` at `frequency_hz`.
  double evaluate(const double* terms, double frequency_hz) const;

  /// Row-major C x C projection, as floats (the GPU kernels' copy; polynomial only).
  const std::vector<float>& projection() const { return projection_; }
  /// log10(nu / nu_0) and the weight of each channel in the logarithmic fit (1: unweighted).
  const std::vector<double>& log_frequencies() const { return log_x_; }
  const std::vector<double>& log_weights() const { return log_weights_; }
  /// The channel weights (the polynomial fit's).
  const std::vector<double>& weights() const { return weights_; }

 private:
  std::size_t channels_, terms_;
  double reference_hz_;
  bool logarithmic_;
  std::vector<double> frequencies_, weights_, log_x_, log_weights_;
  std::vector<float> projection_;  // C x C
  std::vector<double> coefficients_;  // terms x C
};

/// The fit `planes` ask for (none without --fit-spectral-pol / -log-pol, or for polarizations).
std::optional<SpectralFit> spectral_fit_of(const JoinedPlanes& planes);

/// The terms of each component from its plane fluxes (terms of the fitted values are those of
/// the values: T P = T, and a logarithmic fit of values on the curve is the curve),
/// component-major.
std::vector<double> component_terms(const SpectralFit& fit, const std::vector<float>& plane_fluxes);

}  // namespace gpuclean::clean

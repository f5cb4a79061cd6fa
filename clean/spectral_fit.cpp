#include "clean/spectral_fit.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "clean/errors.hpp"
#include "clean/log_polynomial_fit.hpp"

namespace gpuclean::clean {
namespace {

// Solves M X = B for the symmetric positive definite K x K matrix M (row-major), B K x C, by
// Gauss-Jordan elimination with partial pivoting (K is a handful of terms).
std::vector<double> solve(std::vector<double> m, std::vector<double> b, std::size_t k, std::size_t c) {
  for (std::size_t col = 0; col < k; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < k; ++r)
      if (std::abs(m[r * k + col]) > std::abs(m[pivot * k + col])) pivot = r;
    if (!(std::abs(m[pivot * k + col]) > 1e-300))
      throw InvalidSettings("--fit-spectral-pol: the channels' frequencies do not determine " + std::to_string(k) +
                            " terms; give fewer terms.");
    for (std::size_t j = 0; j < k; ++j) std::swap(m[col * k + j], m[pivot * k + j]);
    for (std::size_t j = 0; j < c; ++j) std::swap(b[col * c + j], b[pivot * c + j]);
    const double d = m[col * k + col];
    for (std::size_t j = 0; j < k; ++j) m[col * k + j] /= d;
    for (std::size_t j = 0; j < c; ++j) b[col * c + j] /= d;
    for (std::size_t r = 0; r < k; ++r) {
      if (r == col) continue;
      const double f = m[r * k + col];
      if (f == 0.0) continue;
      for (std::size_t j = 0; j < k; ++j) m[r * k + j] -= f * m[col * k + j];
      for (std::size_t j = 0; j < c; ++j) b[r * c + j] -= f * b[col * c + j];
    }
  }
  return b;
}

}  // namespace

SpectralFit::SpectralFit(std::vector<double> frequencies_hz, const std::vector<double>& weights, std::size_t terms,
                         double reference_hz, bool logarithmic)
    : channels_(frequencies_hz.size()),
      terms_(terms),
      reference_hz_(reference_hz),
      logarithmic_(logarithmic),
      frequencies_(std::move(frequencies_hz)),
      weights_(weights) {
  const std::string option = logarithmic_ ? "--fit-spectral-log-pol" : "--fit-spectral-pol";
  if (terms_ < 1 || (logarithmic_ && terms_ > static_cast<std::size_t>(kMaxLogTerms)))
    throw InvalidSettings(option + " " + std::to_string(terms_) + " needs between 1 and " +
                          (logarithmic_ ? std::to_string(kMaxLogTerms) : std::string("the channels' count")) +
                          " terms; give another count.");
  if (channels_ == 0) throw InvalidSettings(option + " needs at least one channel to fit.");
  // More terms than channels: WSClean's fitters (schaapcommon's PolynomialFitter and
  // NonLinearPowerLawFitter, WSClean 3.1 to 3.7) fit as many terms as there are channels and
  // leave the others 0; so does this fit (terms() is the count fitted).
  terms_ = std::min(terms_, channels_);
  if (!(reference_hz_ > 0.0)) throw InvalidSettings(option + " needs the channels' frequencies (FREQ axis).");
  const std::size_t c = channels_, k = terms_;
  for (std::size_t i = 0; i < c; ++i) {
    if (!(weights_[i] > 0.0)) throw InvalidSettings(option + ": a channel has no weight; give channels with data.");
    if (!(frequencies_[i] > 0.0)) throw InvalidSettings(option + " needs every channel's frequency (FREQ axis).");
    log_x_.push_back(std::log10(frequencies_[i] / reference_hz_));
  }
  if (logarithmic_) {  // unweighted, as WSClean's (spectral_fit.hpp)
    log_weights_.assign(c, 1.0);
    return;
  }
  std::vector<double> a(c * k);  // design matrix, C x K
  for (std::size_t i = 0; i < c; ++i) {
    const double x = frequencies_[i] / reference_hz_ - 1.0;
    double p = 1.0;
    for (std::size_t j = 0; j < k; ++j, p *= x) a[i * k + j] = p;
  }
  std::vector<double> ata(k * k, 0.0), atw(k * c, 0.0);  // A^T W A and A^T W
  for (std::size_t i = 0; i < c; ++i) {
    const double w = weights_[i];
    for (std::size_t r = 0; r < k; ++r) {
      atw[r * c + i] = a[i * k + r] * w;
      for (std::size_t s = 0; s < k; ++s) ata[r * k + s] += a[i * k + r] * w * a[i * k + s];
    }
  }
  coefficients_ = solve(ata, atw, k, c);  // T = (A^T W A)^-1 A^T W
  projection_.assign(c * c, 0.0f);
  for (std::size_t i = 0; i < c; ++i) {
    for (std::size_t j = 0; j < c; ++j) {
      double s = 0.0;
      for (std::size_t r = 0; r < k; ++r) s += a[i * k + r] * coefficients_[r * c + j];
      projection_[i * c + j] = static_cast<float>(s);
    }
  }
}

void SpectralFit::fit(const float* v, float* fitted) const {
  if (logarithmic_) {
    fit_log_polynomial(v, log_x_.data(), log_weights_.data(), static_cast<int>(channels_), static_cast<int>(terms_),
                       fitted, nullptr);
    return;
  }
  for (std::size_t i = 0; i < channels_; ++i) {
    float s = 0.0f;
    for (std::size_t j = 0; j < channels_; ++j) s += projection_[i * channels_ + j] * v[j];
    fitted[i] = s;
  }
}

void SpectralFit::fit_terms(const float* v, double* terms) const {
  if (logarithmic_) {
    std::vector<float> fitted(channels_);
    fit_log_polynomial(v, log_x_.data(), log_weights_.data(), static_cast<int>(channels_), static_cast<int>(terms_),
                       fitted.data(), terms);
    return;
  }
  for (std::size_t r = 0; r < terms_; ++r) {
    double s = 0.0;
    for (std::size_t j = 0; j < channels_; ++j) s += coefficients_[r * channels_ + j] * static_cast<double>(v[j]);
    terms[r] = s;
  }
}

double SpectralFit::evaluate(const double* terms, double frequency_hz) const {
  if (logarithmic_) {
    const double x = std::log10(frequency_hz / reference_hz_);
    double e = 0.0, p = x;
    for (std::size_t r = 1; r < terms_; ++r, p *= x) e += terms[r] * p;
    return terms[0] * std::pow(10.0, e);
  }
  const double x = frequency_hz / reference_hz_ - 1.0;
  double s = 0.0, p = 1.0;
  for (std::size_t r = 0; r < terms_; ++r, p *= x) s += terms[r] * p;
  return s;
}

std::optional<SpectralFit> spectral_fit_of(const JoinedPlanes& planes) {
  if (planes.fit.terms == 0 || planes.join != Join::kChannels) return std::nullopt;
  std::vector<double> freqs, weights;
  for (const CleanPlane& p : planes.planes) {
    freqs.push_back(p.frequency_hz);
    weights.push_back(p.weight);
  }
  return SpectralFit(std::move(freqs), weights, planes.fit.terms, reference_frequency(planes), planes.fit.logarithmic);
}

std::vector<double> component_terms(const SpectralFit& fit, const std::vector<float>& plane_fluxes) {
  const std::size_t c = fit.channels(), count = plane_fluxes.size() / c;
  std::vector<double> terms(count * fit.terms());
  for (std::size_t i = 0; i < count; ++i) fit.fit_terms(plane_fluxes.data() + i * c, terms.data() + i * fit.terms());
  return terms;
}

}  // namespace gpuclean::clean

// How the spectral fits weigh channels (clean/spectral_fit.hpp), as WSClean's do (schaapcommon's
// SpectralFitter, WSClean 3.0 to 3.7): -fit-spectral-log-pol is unweighted (NonLinearPowerLawFitter
// takes no weights), -fit-spectral-pol weighs each channel by its weight. Both are checked against
// independent computations: for two logarithmic terms, the least squares by variable projection
// (for a fixed index the amplitude is linear: A = sum v f / sum f^2, f = 10^(a1 x)) and a golden-
// section search over the index; for two linear terms, the weighted normal equations in closed form.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "clean/spectral_fit.hpp"

namespace gc = gpuclean::clean;

namespace {

// Eight channels of 20 MHz at 1.44 GHz and WSClean-like unequal weights.
std::vector<double> frequencies() {
  std::vector<double> f;
  for (int i = 0; i < 8; ++i) f.push_back(1.37e9 + 20e6 * i);
  return f;
}
const std::vector<double> kWeights = {5577, 1200, 5828, 9256, 700, 4100, 3000, 8000};
constexpr double kReference = 1.44e9;

// A power law of index -0.7 with a few per cent of channel-to-channel scatter.
std::vector<float> noisy_spectrum() {
  const double scatter[8] = {0.06, -0.04, 0.09, -0.07, 0.02, 0.08, -0.05, -0.03};
  std::vector<float> v;
  const std::vector<double> f = frequencies();
  for (int i = 0; i < 8; ++i) v.push_back(static_cast<float>(std::pow(f[i] / kReference, -0.7) * (1.0 + scatter[i])));
  return v;
}

// The least-squares fit, weights w, of A 10^(a1 x), x = log10(nu / nu_0), at every channel.
std::vector<double> power_law_fit(const std::vector<float>& v, const std::vector<double>& w) {
  const std::vector<double> f = frequencies();
  auto cost = [&](double a1, std::vector<double>* fitted) {
    double vf = 0.0, ff = 0.0;
    std::vector<double> shape;
    for (std::size_t i = 0; i < f.size(); ++i) {
      shape.push_back(std::pow(10.0, a1 * std::log10(f[i] / kReference)));
      vf += w[i] * v[i] * shape.back();
      ff += w[i] * shape.back() * shape.back();
    }
    const double a = vf / ff;
    double c = 0.0;
    for (std::size_t i = 0; i < f.size(); ++i) c += w[i] * (a * shape[i] - v[i]) * (a * shape[i] - v[i]);
    if (fitted) {
      fitted->clear();
      for (double sh : shape) fitted->push_back(a * sh);
    }
    return c;
  };
  double lo = -10.0, hi = 10.0;
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int it = 0; it < 200; ++it) {
    const double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
    if (cost(m1, nullptr) < cost(m2, nullptr))
      hi = m2;
    else
      lo = m1;
  }
  std::vector<double> fitted;
  cost(0.5 * (lo + hi), &fitted);
  return fitted;
}

// The weighted least-squares straight line in x = nu / nu_0 - 1 at every channel (closed form).
std::vector<double> line_fit(const std::vector<float>& v, const std::vector<double>& w) {
  const std::vector<double> f = frequencies();
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double x = f[i] / kReference - 1.0;
    sw += w[i], sx += w[i] * x, sy += w[i] * v[i], sxx += w[i] * x * x, sxy += w[i] * x * v[i];
  }
  const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx), offset = (sy - slope * sx) / sw;
  std::vector<double> out;
  for (double nu : f) out.push_back(offset + slope * (nu / kReference - 1.0));
  return out;
}

double largest_gap(const std::vector<double>& a, const std::vector<double>& b) {
  double g = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) g = std::max(g, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return g;
}

const std::vector<double> kEqual(8, 1.0);

TEST(SpectralFitWeights, LogarithmicFitIsUnweightedAsWscleans) {
  const std::vector<float> v = noisy_spectrum();
  ASSERT_GT(largest_gap(power_law_fit(v, kWeights), power_law_fit(v, kEqual)), 1e-3)
      << "the weights must matter on this spectrum for the test to mean anything";
  const gc::SpectralFit fit(frequencies(), kWeights, 2, kReference, true);
  std::vector<float> ours(8);
  fit.fit(v.data(), ours.data());
  const std::vector<double> reference = power_law_fit(v, kEqual);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(ours[i], reference[i], 2e-6 * reference[i]) << "channel " << i;
}

TEST(SpectralFitWeights, PolynomialFitWeighsByTheChannelWeights) {
  const std::vector<float> v = noisy_spectrum();
  ASSERT_GT(largest_gap(line_fit(v, kWeights), line_fit(v, kEqual)), 1e-3);
  const gc::SpectralFit fit(frequencies(), kWeights, 2, kReference, false);
  std::vector<float> ours(8);
  fit.fit(v.data(), ours.data());
  const std::vector<double> reference = line_fit(v, kWeights);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(ours[i], reference[i], 2e-6 * reference[i]) << "channel " << i;
}

}  // namespace

// -deconvolution-channels (app/image/channel_averaging_imager.hpp) against WSClean 3.1's rules
// (W31:deconvolution/imageset.cpp, deconvolutiontable.cpp), each worked out here by hand, over an
// inner imager of 4 channels whose "visibilities" are the image plane: channel c's dirty image is
// its own PSF ⊛ the sky at its frequency, predict stores the N models, re-imaging gives
// dirty_c − PSF_c ⊛ model_c (direct convolution). Channels 1.0..1.6 GHz with image weights 1..4,
// PSFs of different widths, a sky of power-law sources.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <vector>

#include "app/image/channel_averaging_imager.hpp"
#include "app/image/major_cycles.hpp"
#include "clean/errors.hpp"
#include "clean/outer_loop.hpp"
#include "clean/psf.hpp"
#include "tests/support/synthetic.hpp"

namespace ga = gpuclean::app;
namespace gc = gpuclean::clean;
namespace gt = gpuclean::test;

namespace {

constexpr std::size_t kN = 32;
const std::vector<double> kFreqs = {1.0e9, 1.2e9, 1.4e9, 1.6e9};
const std::vector<double> kWeights = {1.0, 2.0, 3.0, 4.0};

struct PowerLaw {
  std::size_t x, y;
  double flux, alpha;  // at 1.3 GHz
  double at(double f) const { return flux * std::pow(f / 1.3e9, alpha); }
};
const std::vector<PowerLaw> kSky = {{10, 12, 1.0, -0.7}, {22, 20, 0.4, 0.5}, {14, 24, 0.1, -1.5}};

class SpectralImagePlaneImager : public ga::MajorCycleImager {
 public:
  SpectralImagePlaneImager() {
    for (std::size_t c = 0; c < kFreqs.size(); ++c) {
      given_.push_back(gt::sidelobed_psf(kN, 1.4 + 0.3 * static_cast<double>(c)));
      truth_.push_back(gc::prepare_psf(given_.back(), kN, kN, nullptr));
      std::vector<gt::PointSource> points;
      for (const PowerLaw& s : kSky) points.push_back({s.x, s.y, static_cast<float>(s.at(kFreqs[c]))});
      dirty_.push_back(gt::dirty_of(points, truth_.back(), kN));
    }
    models = std::vector<gc::HostImage>(kFreqs.size(), gc::HostImage(kN, kN));
  }
  std::vector<gc::HostImage> dirty() override { return dirty_; }
  std::vector<gc::HostImage> psfs() override { return given_; }
  void predict(const std::vector<gc::HostImage>& m) override {
    if (m.size() != kFreqs.size()) throw gc::InvalidInput("the inner imager takes 4 models");
    models = m;
    ++predictions;
  }
  std::vector<gc::HostImage> invert_residual() override {
    std::vector<gc::HostImage> out;
    for (std::size_t c = 0; c < kFreqs.size(); ++c) out.push_back(residual_of(c, models[c]));
    return out;
  }
  gc::HostImage residual_of(std::size_t c, const gc::HostImage& model) const {
    gc::HostImage r = dirty_[c];
    const gc::HostImage predicted = gt::convolve_direct(model, truth_[c]);
    for (std::size_t i = 0; i < r.size(); ++i) r.pixels[i] -= predicted.pixels[i];
    return r;
  }

  std::vector<gc::HostImage> models;  // the last prediction's, N
  std::size_t predictions = 0;

 private:
  std::vector<gc::HostImage> given_, dirty_;
  std::vector<gc::PreparedPsf> truth_;
};

gc::SpectralFitSettings pol(std::size_t terms) { return {terms, false}; }

// Both infinite on a NaN, which std::max would pass over.
float max_abs_diff(const gc::HostImage& a, const gc::HostImage& b) {
  float d = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float e = std::abs(a.pixels[i] - b.pixels[i]);
    d = std::isnan(e) ? INFINITY : std::max(d, e);
  }
  return d;
}

float max_abs(const gc::HostImage& a) {
  float d = 0.0f;
  for (float v : a.pixels) d = std::isnan(v) ? INFINITY : std::max(d, std::abs(v));
  return d;
}

/// By hand: (w_a a + w_b b) / (w_a + w_b), pixel by pixel.
gc::HostImage mean_of_two(const gc::HostImage& a, double wa, const gc::HostImage& b, double wb) {
  gc::HostImage out(a.width, a.height);
  for (std::size_t i = 0; i < a.size(); ++i)
    out.pixels[i] = static_cast<float>((wa * a.pixels[i] + wb * b.pixels[i]) / (wa + wb));
  return out;
}

/// Models on `freqs` planes: at each listed pixel, `spectrum`(f) at each plane's frequency.
template <class Spectrum>
std::vector<gc::HostImage> models_on(const std::vector<double>& freqs, const std::vector<std::size_t>& pixels,
                                     Spectrum spectrum) {
  std::vector<gc::HostImage> out(freqs.size(), gc::HostImage(kN, kN));
  for (std::size_t k = 0; k < freqs.size(); ++k)
    for (std::size_t p : pixels) out[k].pixels[p] = static_cast<float>(spectrum(p, freqs[k]));
  return out;
}

/// The quadratic through three points (Lagrange), at f: what any 3-term fit of 3 values is.
double through_three(const std::vector<double>& x, const std::vector<double>& y, double f) {
  double s = 0.0;
  for (std::size_t i = 0; i < 3; ++i) {
    double l = 1.0;
    for (std::size_t j = 0; j < 3; ++j)
      if (j != i) l *= (f - x[j]) / (x[i] - x[j]);
    s += y[i] * l;
  }
  return s;
}

// WSClean's DeconvolutionTable: channel i of N goes to i·M/N, contiguous, larger groups last;
// M 0 or above N means N.
TEST(ChannelAveragingImager, GroupsAsWsclean) {
  EXPECT_EQ(ga::deconvolution_channel_of(4, 2), (std::vector<std::size_t>{0, 0, 1, 1}));
  EXPECT_EQ(ga::deconvolution_channel_of(4, 3), (std::vector<std::size_t>{0, 0, 1, 2}));
  EXPECT_EQ(ga::deconvolution_channel_of(8, 3), (std::vector<std::size_t>{0, 0, 0, 1, 1, 1, 2, 2}));
  EXPECT_EQ(ga::deconvolution_channel_of(5, 2), (std::vector<std::size_t>{0, 0, 0, 1, 1}));
  EXPECT_EQ(ga::deconvolution_channel_of(4, 0), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(ga::deconvolution_channel_of(4, 9), (std::vector<std::size_t>{0, 1, 2, 3}));
}

// CalculateDeconvolutionFrequencies: the weight-weighted mean band centre and the summed weight;
// a group without weight gets the plain mean frequency and weight 0.
TEST(ChannelAveragingImager, FrequenciesAndWeightsOfTheDeconvolutionChannels) {
  SpectralImagePlaneImager inner;
  ga::ChannelAveragingImager two(inner, kFreqs, kWeights, 2, pol(2));
  ASSERT_EQ(two.planes(), 2u);
  EXPECT_EQ(two.channels(), 4u);
  EXPECT_NEAR(two.frequencies_hz()[0], (1.0e9 * 1 + 1.2e9 * 2) / 3, 1.0);
  EXPECT_NEAR(two.frequencies_hz()[1], (1.4e9 * 3 + 1.6e9 * 4) / 7, 1.0);
  EXPECT_EQ(two.weights(), (std::vector<double>{3.0, 7.0}));

  ga::ChannelAveragingImager flagged(inner, kFreqs, {0.0, 0.0, 3.0, 4.0}, 2, pol(1));
  EXPECT_NEAR(flagged.frequencies_hz()[0], 1.1e9, 1.0);
  EXPECT_EQ(flagged.weights()[0], 0.0);
}

// LoadAndAverage, LoadAndAveragePSFs: each deconvolution channel's dirty image and PSF is the
// image-weighted mean of its channels'; NaN dirty (0/0) and zero PSF where the weights add to 0.
TEST(ChannelAveragingImager, DirtyAndPsfAreImageWeightedMeans) {
  SpectralImagePlaneImager inner;
  const std::vector<gc::HostImage> d = inner.dirty(), p = inner.psfs();
  ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, 2, pol(2));
  const std::vector<gc::HostImage> dirty = imager.dirty(), psfs = imager.psfs();
  ASSERT_EQ(dirty.size(), 2u);
  ASSERT_EQ(psfs.size(), 2u);
  EXPECT_LT(max_abs_diff(dirty[0], mean_of_two(d[0], 1, d[1], 2)), 1e-6f);
  EXPECT_LT(max_abs_diff(dirty[1], mean_of_two(d[2], 3, d[3], 4)), 1e-6f);
  EXPECT_LT(max_abs_diff(psfs[0], mean_of_two(p[0], 1, p[1], 2)), 1e-6f);
  EXPECT_LT(max_abs_diff(psfs[1], mean_of_two(p[2], 3, p[3], 4)), 1e-6f);
  EXPECT_FLOAT_EQ(psfs[1].at(kN / 2, kN / 2), 1.0f);  // means of PSFs of centre 1
  // Not the plain mean: the weights matter here.
  EXPECT_GT(max_abs_diff(dirty[1], mean_of_two(d[2], 1, d[3], 1)), 1e-3f);

  // N 4, M 3: {0, 1}, {2}, {3}; channel 1 without weight adds nothing, channel 0 alone is left.
  ga::ChannelAveragingImager three(inner, kFreqs, {1.0, 0.0, 3.0, 4.0}, 3, pol(2));
  const std::vector<gc::HostImage> d3 = three.dirty();
  ASSERT_EQ(d3.size(), 3u);
  EXPECT_EQ(max_abs_diff(d3[0], d[0]), 0.0f);
  EXPECT_EQ(max_abs_diff(d3[2], d[3]), 0.0f);

  ga::ChannelAveragingImager flagged(inner, kFreqs, {0.0, 0.0, 3.0, 4.0}, 2, pol(1));
  EXPECT_TRUE(std::isnan(flagged.dirty()[0].pixels[5]));
  EXPECT_EQ(max_abs(flagged.psfs()[0]), 0.0f);
}

// InterpolateAndStoreModel: a model whose spectrum is one the fit holds (a line for 2 polynomial
// terms, a power law for 2 logarithmic terms, a parabola for 3 terms on 3 planes) comes back as
// that spectrum at every imaging channel's frequency; zero pixels stay zero. predict hands those
// N models to the inner imager.
TEST(ChannelAveragingImager, ModelOnTheFitExpandsToTheExactChannelValues) {
  const std::vector<std::size_t> pixels = {3 * kN + 4, 17 * kN + 9, 30 * kN + 31};
  const auto line = [](std::size_t p, double f) { return 0.01 * static_cast<double>(p % 7 + 1) * (2.5 - 1.1e-9 * f); };
  const auto power = [](std::size_t p, double f) { return 0.3 * static_cast<double>(p % 5 + 1) * std::pow(f / 1.3e9, -0.8); };
  const auto parabola = [](std::size_t p, double f) {
    const double x = f / 1e9 - 1.3;
    return 0.2 + 0.01 * static_cast<double>(p % 3) - 0.5 * x + 2.0 * x * x;
  };
  struct Case {
    std::size_t m;
    gc::SpectralFitSettings fit;
    std::function<double(std::size_t, double)> spectrum;
    double tolerance;  // relative to the largest value
  };
  const std::vector<Case> cases = {{2, pol(2), line, 1e-6}, {2, {2, true}, power, 1e-5}, {3, pol(3), parabola, 1e-5}};
  for (const Case& t : cases) {
    SpectralImagePlaneImager inner;
    ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, t.m, t.fit);
    imager.dirty();
    imager.predict(models_on(imager.frequencies_hz(), pixels, t.spectrum));
    ASSERT_EQ(inner.predictions, 1u);
    ASSERT_EQ(inner.models.size(), 4u);
    const std::vector<gc::HostImage> expected = models_on(kFreqs, pixels, t.spectrum);
    for (std::size_t c = 0; c < 4; ++c) {
      EXPECT_LT(max_abs_diff(inner.models[c], expected[c]), t.tolerance * max_abs(expected[c]))
          << "M " << t.m << ", terms " << t.fit.terms << (t.fit.logarithmic ? " log" : "") << ", channel " << c;
      std::size_t nonzero = 0;
      for (float v : inner.models[c].pixels) nonzero += v != 0.0f;
      EXPECT_EQ(nonzero, pixels.size());
    }
  }
}

// With more deconvolution channels than terms the fit is a weighted least-squares one (weights:
// the deconvolution channels' summed image weights, as WSClean's polynomial fit): N 4 → M 3
// planes of weights 3, 3, 4 and a 2-term fit of values off any line give the weighted line,
// worked out here by hand.
TEST(ChannelAveragingImager, TheFitIsWeightedByTheDeconvolutionChannelWeights) {
  SpectralImagePlaneImager inner;
  ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, 3, pol(2));
  ASSERT_EQ(imager.weights(), (std::vector<double>{3.0, 3.0, 4.0}));
  const std::vector<double>& f = imager.frequencies_hz();
  const std::vector<double> v = {1.0, 0.2, 0.9}, w = imager.weights();
  const std::size_t p = 5 * kN + 20;
  std::vector<gc::HostImage> models(3, gc::HostImage(kN, kN));
  double sw = 0, sx = 0, sy = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    models[k].pixels[p] = static_cast<float>(v[k]);
    sw += w[k], sx += w[k] * f[k], sy += w[k] * v[k];
  }
  const double xm = sx / sw, ym = sy / sw;
  double sxy = 0, sxx = 0;
  for (std::size_t k = 0; k < 3; ++k) sxy += w[k] * (f[k] - xm) * (v[k] - ym), sxx += w[k] * (f[k] - xm) * (f[k] - xm);
  imager.predict(models);
  double unweighted_gap = 0.0;
  for (std::size_t c = 0; c < 4; ++c) {
    const double line = ym + sxy / sxx * (kFreqs[c] - xm);
    EXPECT_NEAR(inner.models[c].pixels[p], line, 1e-5) << c;
    // The unweighted line, for scale: the test tells the two apart.
    const double um = (f[0] + f[1] + f[2]) / 3, vm = (v[0] + v[1] + v[2]) / 3;
    double uxy = 0, uxx = 0;
    for (std::size_t k = 0; k < 3; ++k) uxy += (f[k] - um) * (v[k] - vm), uxx += (f[k] - um) * (f[k] - um);
    unweighted_gap = std::max(unweighted_gap, std::abs(line - (vm + uxy / uxx * (kFreqs[c] - um))));
  }
  EXPECT_GT(unweighted_gap, 1e-3);
}

// After predict, re-imaging gives the inner imager's N residuals (of the N models predicted)
// averaged as the dirty images are.
TEST(ChannelAveragingImager, ResidualsAfterPredictAreTheInnerResidualsAveraged) {
  SpectralImagePlaneImager inner;
  ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, 2, pol(2));
  imager.dirty();
  // Half of each source, on the fit's line through its two planes' values.
  std::vector<gc::HostImage> models(2, gc::HostImage(kN, kN));
  for (std::size_t k = 0; k < 2; ++k)
    for (const PowerLaw& s : kSky) models[k].at(s.x, s.y) = static_cast<float>(0.5 * s.at(imager.frequencies_hz()[k]));
  imager.predict(models);
  std::vector<gc::HostImage> r;
  for (std::size_t c = 0; c < 4; ++c) r.push_back(inner.residual_of(c, inner.models[c]));
  const std::vector<gc::HostImage> residuals = imager.invert_residual();
  ASSERT_EQ(residuals.size(), 2u);
  EXPECT_LT(max_abs_diff(residuals[0], mean_of_two(r[0], 1, r[1], 2)), 1e-6f);
  EXPECT_LT(max_abs_diff(residuals[1], mean_of_two(r[2], 3, r[3], 4)), 1e-6f);
  // The prediction removed about half of the brightest source.
  const float peak_before = imager.dirty()[0].at(10, 12), peak_after = residuals[0].at(10, 12);
  EXPECT_NEAR(peak_after / peak_before, 0.5f, 0.05f);
}

// WSClean reloads its M-plane model each round as the mean of the stored N models and adds the
// round's components to that: with 3 terms on N 4 → M 3 ({0, 1}, {2}, {3}) the second round's N
// models are interp(mean(interp(m1)) + (m2 − m1)), not interp(m2). Worked out by hand with the
// parabola through the three planes.
TEST(ChannelAveragingImager, SecondRoundStartsFromTheMeanOfTheStoredChannelModels) {
  SpectralImagePlaneImager inner;
  ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, 3, pol(3));
  imager.dirty();
  const std::vector<double>& f = imager.frequencies_hz();
  const std::size_t p = 12 * kN + 7;
  const std::vector<double> m1 = {0.9, 0.5, 0.4}, delta = {0.1, 0.05, 0.3};  // m1 is no line
  std::vector<gc::HostImage> round1(3, gc::HostImage(kN, kN)), round2(3, gc::HostImage(kN, kN));
  for (std::size_t k = 0; k < 3; ++k) {
    round1[k].pixels[p] = static_cast<float>(m1[k]);
    round2[k].pixels[p] = static_cast<float>(m1[k] + delta[k]);
  }
  imager.predict(round1);
  std::vector<double> n1(4);
  for (std::size_t c = 0; c < 4; ++c) {
    n1[c] = through_three(f, m1, kFreqs[c]);
    EXPECT_NEAR(inner.models[c].pixels[p], n1[c], 1e-5) << c;
  }
  imager.predict(round2);
  const std::vector<double> reloaded = {(1 * n1[0] + 2 * n1[1]) / 3 + delta[0], n1[2] + delta[1], n1[3] + delta[2]};
  double moved = 0.0;
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_NEAR(inner.models[c].pixels[p], through_three(f, reloaded, kFreqs[c]), 1e-5) << c;
    std::vector<double> direct = {m1[0] + delta[0], m1[1] + delta[1], m1[2] + delta[2]};
    moved = std::max(moved, std::abs(through_three(f, reloaded, kFreqs[c]) - through_three(f, direct, kFreqs[c])));
  }
  EXPECT_GT(moved, 1e-3);  // the two rules differ here, so the test tells them apart

  // With 2 polynomial terms the round trip changes nothing: the mean of a line over a group is
  // the line at the group's weighted mean frequency.
  SpectralImagePlaneImager inner2;
  ga::ChannelAveragingImager two(inner2, kFreqs, kWeights, 2, pol(2));
  const auto line1 = [](std::size_t, double fr) { return 1.0 - 0.3e-9 * fr; };
  const auto line2 = [](std::size_t, double fr) { return 1.5 - 0.2e-9 * fr; };
  two.predict(models_on(two.frequencies_hz(), {p}, line1));
  two.predict(models_on(two.frequencies_hz(), {p}, line2));
  for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(inner2.models[c].pixels[p], line2(p, kFreqs[c]), 1e-6) << c;
}

// The outputs per imaging channel: without a prediction (-mgain 1) the models interpolated once
// and each channel's residual its group's (AssignAndStoreResidual); after predict and re-imaging
// of the final models, the predicted N models and the inner N residuals; a round after the last
// prediction interpolates again and assigns the group residuals.
TEST(ChannelAveragingImager, ChannelOutputsAsWsclean) {
  const std::size_t p = 10 * kN + 10;
  const auto line = [](std::size_t, double f) { return 0.6 - 0.2e-9 * f; };
  {
    SpectralImagePlaneImager inner;
    ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, 2, pol(2));
    const std::vector<gc::HostImage> residuals = imager.dirty();
    const ga::ChannelAveragingImager::ChannelImages out =
        imager.channel_outputs(models_on(imager.frequencies_hz(), {p}, line), residuals);
    EXPECT_EQ(inner.predictions, 0u);
    ASSERT_EQ(out.residuals.size(), 4u);
    ASSERT_EQ(out.models.size(), 4u);
    for (std::size_t c = 0; c < 4; ++c) {
      EXPECT_EQ(max_abs_diff(out.residuals[c], residuals[c / 2]), 0.0f) << c;
      EXPECT_NEAR(out.models[c].pixels[p], line(p, kFreqs[c]), 1e-6) << c;
    }
  }
  {
    SpectralImagePlaneImager inner;
    ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, 2, pol(2));
    imager.dirty();
    const std::vector<gc::HostImage> models = models_on(imager.frequencies_hz(), {p}, line);
    imager.predict(models);
    const std::vector<gc::HostImage> residuals = imager.invert_residual();
    const ga::ChannelAveragingImager::ChannelImages out = imager.channel_outputs(models, residuals);
    for (std::size_t c = 0; c < 4; ++c) {
      EXPECT_EQ(max_abs_diff(out.models[c], inner.models[c]), 0.0f) << c;
      EXPECT_EQ(max_abs_diff(out.residuals[c], inner.residual_of(c, inner.models[c])), 0.0f) << c;
    }
    EXPECT_GT(max_abs_diff(out.residuals[0], out.residuals[1]), 1e-3f);  // each channel its own

    std::vector<gc::HostImage> later = models;  // a round after the last prediction
    for (gc::HostImage& m : later) m.pixels[p] *= 2.0f;
    const ga::ChannelAveragingImager::ChannelImages out2 = imager.channel_outputs(later, residuals);
    for (std::size_t c = 0; c < 4; ++c) {
      EXPECT_EQ(max_abs_diff(out2.residuals[c], residuals[c / 2]), 0.0f) << c;
      EXPECT_NEAR(out2.models[c].pixels[p], 2 * line(p, kFreqs[c]), 1e-6) << c;
    }
  }
}

// Counts and sizes that do not fit are refused before the inner imager is asked anything.
TEST(ChannelAveragingImager, WrongCountsAndSettingsThrow) {
  SpectralImagePlaneImager inner;
  ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, 2, pol(2));
  imager.dirty();
  EXPECT_THROW(imager.predict(std::vector<gc::HostImage>(1, gc::HostImage(kN, kN))), gc::InvalidInput);
  EXPECT_THROW(imager.predict(std::vector<gc::HostImage>(4, gc::HostImage(kN, kN))), gc::InvalidInput);
  EXPECT_THROW(imager.predict(std::vector<gc::HostImage>(2, gc::HostImage(kN, kN / 2))), gc::InvalidInput);
  EXPECT_EQ(inner.predictions, 0u);
  EXPECT_THROW(imager.channel_outputs(std::vector<gc::HostImage>(3, gc::HostImage(kN, kN)),
                                      std::vector<gc::HostImage>(2, gc::HostImage(kN, kN))),
               gc::InvalidInput);
  EXPECT_THROW(imager.average(std::vector<gc::HostImage>(2, gc::HostImage(kN, kN))), gc::InvalidInput);
  EXPECT_THROW(ga::ChannelAveragingImager(inner, kFreqs, {1.0, 2.0}, 2, pol(2)), gc::InvalidInput);
  EXPECT_THROW(ga::ChannelAveragingImager(inner, kFreqs, kWeights, 2, pol(0)), gc::InvalidSettings);
  EXPECT_NO_THROW(ga::ChannelAveragingImager(inner, kFreqs, kWeights, 4, pol(0)));  // M = N: no fit needed
}

// More terms than deconvolution channels (WSClean 3.1 runs -fit-spectral-pol 3 on 2 planes): as
// WSClean's fitters, as many terms as planes are fitted, so the interpolated models are the 2-term
// fit's (issue 46).
TEST(ChannelAveragingImager, MoreTermsThanPlanesFitAsManyAsThePlanes) {
  SpectralImagePlaneImager two_terms, three_terms;
  ga::ChannelAveragingImager two(two_terms, kFreqs, kWeights, 2, pol(2)), three(three_terms, kFreqs, kWeights, 2, pol(3));
  two.dirty(), three.dirty();
  std::vector<gc::HostImage> models(2, gc::HostImage(kN, kN));
  models[0].pixels[5 * kN + 20] = 1.0f, models[1].pixels[5 * kN + 20] = 0.4f;
  two.predict(models), three.predict(models);
  ASSERT_EQ(three_terms.models.size(), 4u);
  for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(max_abs_diff(three_terms.models[c], two_terms.models[c]), 0.0f) << c;
}

// The whole loop: a joined session with a 2-term fit on the 2 deconvolution channels, -mgain 0.8,
// through run_major_cycles. The channel residuals at the end are the inner imager's of the final
// channel models, and each source's model flux in every channel is what a line can hold of its
// power law: the line through its two deconvolution channels' (weighted mean) fluxes.
TEST(ChannelAveragingImager, MajorCyclesOnTheDeconvolutionChannels) {
  SpectralImagePlaneImager inner;
  ga::ChannelAveragingImager imager(inner, kFreqs, kWeights, 2, pol(2));
  const std::vector<gc::HostImage> dirty = imager.dirty();
  gc::OuterLoopInput in;
  in.width = in.height = kN;
  in.channels = imager.planes();
  in.psfs = imager.psfs();
  in.frequencies_hz = imager.frequencies_hz();
  in.weights = imager.weights();
  gc::CleanSettings s;
  s.device = gc::Device::kCpu;
  s.threads = 2;
  s.threshold = 0.002;
  s.auto_threshold = 0.0;
  s.join_channels = true;
  s.fit_spectral_pol = 2;
  gc::OuterLoopSession session(s, in, {dirty[0].pixels.data(), dirty[1].pixels.data()});
  const ga::MajorCycleReport report =
      ga::run_major_cycles(imager, session, {.niter = 10000, .mgain = 0.8, .nmiter = 20});
  ASSERT_GE(report.cycles.size(), 2u);
  EXPECT_EQ(inner.predictions, report.predictions);
  const ga::ChannelAveragingImager::ChannelImages out = imager.channel_outputs(session.models(), session.residuals());
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(max_abs_diff(out.residuals[c], inner.residual_of(c, out.models[c])), 0.0f) << c;
    for (const PowerLaw& src : kSky) {
      double flux = 0.0;
      for (std::size_t y = src.y - 2; y <= src.y + 2; ++y)
        for (std::size_t x = src.x - 2; x <= src.x + 2; ++x) flux += out.models[c].at(x, y);
      const double s0 = (1 * src.at(kFreqs[0]) + 2 * src.at(kFreqs[1])) / 3;
      const double s1 = (3 * src.at(kFreqs[2]) + 4 * src.at(kFreqs[3])) / 7;
      const double f0 = imager.frequencies_hz()[0], f1 = imager.frequencies_hz()[1];
      const double expected = s0 + (s1 - s0) * (kFreqs[c] - f0) / (f1 - f0);
      std::printf("channel %zu, source at %zu, %zu: model %.4f Jy, line %.4f Jy, power law %.4f Jy\n", c, src.x,
                  src.y, flux, expected, src.at(kFreqs[c]));
      EXPECT_NEAR(flux, expected, 0.02 * expected + 0.002) << "channel " << c << " source at " << src.x << ", "
                                                           << src.y;
    }
  }
}

}  // namespace

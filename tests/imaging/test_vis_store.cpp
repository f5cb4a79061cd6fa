// The host VisStore (imaging/vis_store) and its MajorCycleImager (app/image/vis_store_imager) on
// synthetic samples (major-cycle-plan.md §1, §3): the residual after predict is the inversion of
// data − predict_cpu(model) made here, and a model equal to the true sky of noiseless data leaves
// a residual near zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "app/image/vis_store_imager.hpp"
#include "clean/errors.hpp"
#include "imaging/vis_store.hpp"
#include "tests/imaging/direct_ft.hpp"
#include "tests/imaging/vis_store_samples.hpp"

namespace gpuclean::imaging {
namespace {

using namespace direct_ft;
using test_samples::random_channel_samples;  // Data, random_uvw, direct_predict, kArcsec, kThreads

const ImageGeometry kImage{64, 64, 30 * kArcsec};

ChannelSamples random_samples(std::size_t n, std::uint64_t seed) {
  return random_channel_samples(n, kImage.scale, 200, seed);
}

double peak(const std::vector<double>& image) {
  double p = 0;
  for (double x : image) p = std::max(p, std::abs(x));
  return p;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

double sum(const std::vector<float>& cw) {
  double t = 0;
  for (float x : cw) t += x;
  return t;
}

/// Point sources on pixel centres (Jy/pixel).
std::vector<double> point_model() {
  std::vector<double> m(kImage.width * kImage.height, 0.0);
  m[32 * 64 + 32] = 1.0;
  m[20 * 64 + 45] = 0.5;
  m[50 * 64 + 10] = -0.25;
  m[8 * 64 + 7] = 0.125;
  return m;
}

TEST(VisStore, ResidualIsInversionOfDataMinusPredictMadeIndependently) {
  const ChannelSamples s = random_samples(4000, 7);
  VisStore store({kImage, 1e-4, kThreads});
  store.add_channel(s, sum(s.cw));
  store.invert_psf(0);
  const std::vector<double> dirty = store.invert_dirty(0);
  EXPECT_LE(max_difference(store.invert_residual(0), dirty), 1e-12 * peak(dirty));  // model values still 0
  const std::vector<double> model = point_model();
  store.predict(0, model);
  const std::vector<double> residual = store.invert_residual(0);

  // Here: the plan over the samples with unit weights, predict_cpu, the float difference, invert_cpu,
  // ÷ Σcw and the PSF's centre.
  const std::vector<float> ones(s.w.size(), 1.0f);
  const GridPlan plan = choose_grid_plan(kImage, 1e-4, w_range(s.w, ones), s.w.size());
  const std::vector<std::complex<double>> predicted = predict_cpu(plan, model, Samples{s.u, s.v, s.w, {}, {}}, kThreads);
  std::vector<std::complex<float>> diff(s.vis.size());
  for (std::size_t k = 0; k < diff.size(); ++k) diff[k] = s.vis[k] - std::complex<float>(predicted[k]);
  const double norm = sum(s.cw);
  const std::vector<double> psf = invert_cpu(plan, Samples{s.u, s.v, s.w, s.one, s.cw}, kThreads);
  const double centre = psf[32 * 64 + 32] / norm;
  std::vector<double> expected = invert_cpu(plan, Samples{s.u, s.v, s.w, diff, s.cw}, kThreads);
  for (double& x : expected) x = x / norm / centre;
  EXPECT_LE(max_difference(residual, expected), 1e-12 * peak(dirty));

  // By linearity too: dirty − the inversion of the prediction, to float rounding of the values.
  std::vector<std::complex<float>> pf(predicted.begin(), predicted.end());
  std::vector<double> model_image = invert_cpu(plan, Samples{s.u, s.v, s.w, pf, s.cw}, kThreads);
  for (std::size_t i = 0; i < dirty.size(); ++i) model_image[i] = dirty[i] - model_image[i] / norm / centre;
  EXPECT_LE(max_difference(residual, model_image), 1e-5 * peak(dirty));
  EXPECT_GT(max_difference(residual, dirty), 0.1 * peak(dirty));  // the model was subtracted
}

TEST(VisStore, TrueSkyModelLeavesAResidualNearZero) {
  ChannelSamples s = random_samples(4000, 11);
  const std::vector<double> sky = point_model();
  Data d;
  d.u = s.u, d.v = s.v, d.w = s.w;
  const std::vector<std::complex<double>> vis = direct_predict(kImage, sky, d, true);  // noiseless, exact
  for (std::size_t k = 0; k < vis.size(); ++k) s.vis[k] = std::complex<float>(vis[k]);
  VisStore store({kImage, 1e-4, kThreads});
  store.add_channel(s, sum(s.cw));
  store.invert_psf(0);
  const std::vector<double> dirty = store.invert_dirty(0);
  store.predict(0, sky);
  const double ratio = peak(store.invert_residual(0)) / peak(dirty);
  RecordProperty("residual_over_dirty_peak", std::to_string(ratio));
  std::printf("true-sky residual peak / dirty peak = %.3g\n", ratio);
  EXPECT_LT(ratio, 1e-4);
  EXPECT_NEAR(peak(dirty), 1.0, 0.05);  // the 1 Jy source, ÷ Σcw and the PSF centre
}

TEST(VisStore, RefusesEmptyChannelsAndModelsOfTheWrongSize) {
  VisStore store({kImage, 1e-4, kThreads});
  EXPECT_THROW(store.add_channel(ChannelSamples{}, 0), clean::InvalidInput);
  store.add_channel(random_samples(100, 3), 1);
  EXPECT_THROW(store.predict(0, std::vector<double>(10)), clean::InvalidInput);
}

TEST(VisStoreImager, ImagesEveryChannelAsTheStoreAndPredictsEachModel) {
  VisStore store({kImage, 1e-4, kThreads});
  store.add_channel(random_samples(3000, 5), 1234.0);
  store.add_channel(random_samples(3000, 6), 2345.0);
  app::VisStoreImager imager(store);
  const std::vector<clean::HostImage> dirty = imager.dirty(), psfs = imager.psfs();
  ASSERT_EQ(dirty.size(), 2u);
  ASSERT_EQ(psfs.size(), 2u);
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_FLOAT_EQ(psfs[c].at(32, 32), 1.0f);
    const std::vector<double> d = store.invert_dirty(c);  // normalised by the centre kept above
    for (std::size_t i = 0; i < d.size(); ++i) ASSERT_NEAR(dirty[c].pixels[i], d[i], 1e-6);  // threads add in any order
  }
  clean::HostImage model(64, 64);
  model.at(32, 32) = 1.0f;
  clean::HostImage other(64, 64);
  other.at(20, 40) = 0.5f;
  // Predicted here channel by channel from its own model (the same samples, PSF centres made again).
  VisStore reference({kImage, 1e-4, kThreads});
  reference.add_channel(random_samples(3000, 5), 1234.0);
  reference.add_channel(random_samples(3000, 6), 2345.0);
  for (std::size_t c = 0; c < 2; ++c) reference.invert_psf(c);
  imager.predict({model, other});
  const std::vector<clean::HostImage> residual = imager.invert_residual();
  for (std::size_t c = 0; c < 2; ++c) {
    const clean::HostImage& m = c == 0 ? model : other;
    reference.predict(c, std::vector<double>(m.pixels.begin(), m.pixels.end()));
    const std::vector<double> r = reference.invert_residual(c);
    for (std::size_t i = 0; i < r.size(); ++i) ASSERT_NEAR(residual[c].pixels[i], r[i], 1e-6) << c;
  }
  EXPECT_THROW(imager.predict({model}), clean::InvalidInput);
}

}  // namespace
}  // namespace gpuclean::imaging

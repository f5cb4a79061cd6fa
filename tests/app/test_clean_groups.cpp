// Which output channels `gpuclean image -niter` cleans together and in which beam
// (app/image/clean_groups), and the VisStoreImager of some of a store's channels:
// - joined: one group of every channel; not joined: a group per channel (WSClean 3.1);
// - a group's beam is WSClean's minTheoreticalBeamSize: the smallest over its channels of
//   max(1 / longest baseline, pixel, taper), in pixels; the session's multiscale scales and
//   local-RMS window are measured in it, so the automatic scales are WSClean's (its log, measured);
// - an imager of channel 1 only images, predicts and re-images that channel as the whole store's.
// No MS is read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "app/image/clean_groups.hpp"
#include "app/image/vis_store_imager.hpp"
#include "clean/errors.hpp"
#include "clean/scale_set.hpp"
#include "tests/imaging/direct_ft.hpp"
#include "tests/imaging/vis_store_samples.hpp"

namespace gpuclean {
namespace {

using Groups = std::vector<std::vector<std::size_t>>;
constexpr double kArcsec = M_PI / 180 / 3600;

TEST(CleanGroups, JoinedIsOneGroupElseOneChannelEach) {
  EXPECT_EQ(app::clean_groups(3, true), (Groups{{0, 1, 2}}));
  EXPECT_EQ(app::clean_groups(3, false), (Groups{{0}, {1}, {2}}));
  EXPECT_EQ(app::clean_groups(1, false), (Groups{{0}}));
  EXPECT_EQ(app::clean_groups(1, true), (Groups{{0}}));
}

imaging::ChannelImage channel(double theoretic_arcsec) {
  imaging::ChannelImage c;
  c.theoretic_beam_rad = theoretic_arcsec * kArcsec;
  return c;
}

TEST(CleanGroups, BeamIsTheSmallestTheoreticBeamOfTheGroup) {
  const imaging::ImageGeometry image{512, 512, 2 * kArcsec};
  // Measured: WSClean 3.1's "maxuvw" of the two channels of test_image_channels_vs_wsclean's MS
  // (27005.9 and 37808.3 λ; its log: "theoretical=7.64''" and "5.46''").
  const double b0 = 1 / 27005.9 / kArcsec, b1 = 1 / 37808.3 / kArcsec;
  const std::vector<imaging::ChannelImage> channels = {channel(b0), channel(b1), channel(0)};
  EXPECT_NEAR(app::group_beam_pixels(channels, {0}, image, 0), b0 / 2, 1e-9);
  EXPECT_NEAR(app::group_beam_pixels(channels, {1}, image, 0), b1 / 2, 1e-9);
  EXPECT_NEAR(app::group_beam_pixels(channels, {0, 1}, image, 0), b1 / 2, 1e-9);
  // A channel with no baseline is left out (WSClean's 1 / 0); none at all: 0.
  EXPECT_NEAR(app::group_beam_pixels(channels, {0, 1, 2}, image, 0), b1 / 2, 1e-9);
  EXPECT_EQ(app::group_beam_pixels(channels, {2}, image, 0), 0.0);
  // Never below a pixel, and a wider taper wins (WSClean's DetermineBeamSize).
  EXPECT_NEAR(app::group_beam_pixels({channel(1.0)}, {0}, image, 0), 1.0, 1e-12);
  EXPECT_NEAR(app::group_beam_pixels(channels, {0, 1}, image, 20 * kArcsec), 10.0, 1e-9);
}

TEST(CleanGroups, SessionScalesAndLocalRmsAreInTheGroupBeam) {
  app::ImageOptions o;
  o.deconvolution.settings.multiscale.enabled = true;
  o.deconvolution.settings.local_rms.enabled = true;
  o.device = clean::Device::kCpu;
  const double beam = 5.46 / 2;  // 2.7278 px: WSClean's "Theoretic beam = 5.46''" at -scale 2asec
  const clean::CleanSettings s = app::group_settings(o, 1 / 37808.3 / kArcsec / 2);
  EXPECT_NEAR(s.multiscale.beam_pixels, beam, 3e-3);  // the log rounds to 0.01″
  EXPECT_NEAR(s.local_rms.beam_pixels, beam, 3e-3);
  EXPECT_EQ(s.device, clean::Device::kCpu);
  EXPECT_EQ(app::group_settings(o, 0).multiscale.beam_pixels, 0.0);  // unknown: the fitted beam
  // WSClean 3.1's automatic scales for that beam at 512² (its log, "Scale info": 0, 11, 22, 44,
  // 87, 175 pixels: 4 x the beam, doubling below half the image), whatever the fitted beam is.
  const double fitted = 13.47 / 2;  // the PSF's fitted major axis in that run (pixels)
  const std::vector<clean::CleanScale> scales =
      clean::plan_scales(s, clean::scale_beam_pixels(s, fitted), 512, 512, 512);
  const std::vector<double> wsclean = {0, 11, 22, 44, 87, 175};
  ASSERT_EQ(scales.size(), wsclean.size());
  for (std::size_t i = 0; i < scales.size(); ++i) EXPECT_NEAR(scales[i].size, wsclean[i], 0.5) << i;
}

imaging::ChannelSamples random_samples(const imaging::ImageGeometry& g, std::size_t n, std::uint64_t seed) {
  return imaging::test_samples::random_channel_samples(n, g.scale, 200, seed);
}

TEST(CleanGroups, AnImagerOfOneChannelImagesItAsTheWholeStore) {
  const imaging::ImageGeometry g{64, 64, 30 * kArcsec};
  const auto store_of = [&] {
    imaging::VisStore store({g, 1e-4, 2});
    store.add_channel(random_samples(g, 3000, 5), 1234.0);
    store.add_channel(random_samples(g, 3000, 6), 2345.0);
    return store;
  };
  imaging::VisStore all = store_of(), part = store_of();
  app::VisStoreImager whole(all), one(part, {1});
  EXPECT_EQ(one.channels(), (std::vector<std::size_t>{1}));
  const std::vector<clean::HostImage> wd = whole.dirty(), od = one.dirty(), op = one.psfs();
  ASSERT_EQ(od.size(), 1u);
  ASSERT_EQ(op.size(), 1u);
  EXPECT_FLOAT_EQ(op[0].at(32, 32), 1.0f);
  for (std::size_t i = 0; i < od[0].pixels.size(); ++i) ASSERT_NEAR(od[0].pixels[i], wd[1].pixels[i], 1e-6);
  clean::HostImage model(64, 64), zero(64, 64);
  model.at(20, 40) = 0.5f;
  whole.predict({zero, model});
  one.predict({model});
  const std::vector<clean::HostImage> wr = whole.invert_residual(), orr = one.invert_residual();
  ASSERT_EQ(orr.size(), 1u);
  double changed = 0;
  for (std::size_t i = 0; i < orr[0].pixels.size(); ++i) {
    ASSERT_NEAR(orr[0].pixels[i], wr[1].pixels[i], 1e-6);
    changed = std::max(changed, double{std::abs(orr[0].pixels[i] - od[0].pixels[i])});
  }
  EXPECT_GT(changed, 0.1);  // the model was subtracted from channel 1
  for (std::complex<float> v : part.model_values(0)) ASSERT_EQ(v, 0.0f);  // channel 0 was not predicted
  EXPECT_THROW(one.predict({model, model}), clean::InvalidInput);
  EXPECT_THROW(app::VisStoreImager(part, {2}), clean::InvalidInput);
  EXPECT_THROW(app::VisStoreImager(part, {}), clean::InvalidInput);
}

}  // namespace
}  // namespace gpuclean

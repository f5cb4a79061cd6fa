// `gpuclean image`'s deconvolution options (app/image/deconvolution_args): each WSClean name reaches
// its setting with WSClean 3.1's units and defaults (W31:main/settings.h), bad values are refused
// with one line and exit 2 (a -fits-mask that does not open or fit: exit 3), and -niter > 0 is
// refused only after every value was checked. No MS is opened: parse_image_args reads none.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "app/failure.hpp"
#include "app/image/image_args.hpp"
#include "io/fits_writer.hpp"
#include "tests/support/temp_dir.hpp"

namespace gpuclean {
namespace {

using app::ImageOptions;
using Args = std::vector<std::string>;

ImageOptions parse(Args extra) {
  Args args = {"-size", "64", "64", "-scale", "2asec"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("a.ms");
  return app::parse_image_args(args);
}

/// The exit code and message a refused command line gives (app::classify, as main does).
app::Failure refusal(Args extra) {
  try {
    parse(std::move(extra));
  } catch (...) {
    return app::classify(std::current_exception());
  }
  ADD_FAILURE() << "accepted";
  return {};
}

void expect_usage(Args extra, const std::string& says) {
  SCOPED_TRACE(extra.front());
  const app::Failure f = refusal(extra);
  EXPECT_EQ(f.code, app::ExitCode::kUsage) << f.message;
  EXPECT_NE(f.message.find(says), std::string::npos) << f.message;
  EXPECT_EQ(f.message.find('\n'), std::string::npos) << f.message;
}

std::string write_mask(const test::TempDir& dir, std::size_t w, std::size_t h) {
  const std::string path = dir.file("mask.fits");
  const std::vector<float> pixels(w * h, 1.0f);
  io::write_fits_image(path, pixels.data(), w, h, io::FitsHeader{},
                       {static_cast<long>(w), static_cast<long>(h), 1, 1}, io::WriteOptions{});
  return path;
}

TEST(ImageArgs, DefaultsAreWsclean31s) {
  const app::DeconvolutionOptions d = parse({}).deconvolution;
  EXPECT_EQ(d.niter, 0u);
  EXPECT_EQ(d.nmiter, 20u);
  EXPECT_EQ(d.mgain, 1.0);
  EXPECT_EQ(d.settings.gain, 0.1);
  EXPECT_EQ(d.settings.threshold, 0.0);
  EXPECT_EQ(d.settings.auto_threshold, 0.0);  // gpuclean's own default is 3
  EXPECT_EQ(d.settings.auto_mask, 0.0);
  EXPECT_FALSE(d.settings.local_rms.enabled);
  EXPECT_EQ(d.settings.local_rms.window, 25.0);
  EXPECT_FALSE(d.settings.multiscale.enabled);
  EXPECT_EQ(d.settings.multiscale.gain, 0.2);
  EXPECT_EQ(d.settings.multiscale.scale_bias, 0.6);
  EXPECT_EQ(d.settings.multiscale.max_scales, 0u);
  EXPECT_FALSE(d.settings.join_channels);
  EXPECT_EQ(d.settings.fit_spectral_pol, 0u);
  EXPECT_EQ(d.deconvolution_channels, 0u);
  EXPECT_FALSE(d.save_source_list);
  EXPECT_TRUE(d.update_model_required);
  EXPECT_FALSE(d.settings.beam_shape.has_value());
  EXPECT_TRUE(d.fits_mask.empty());
}

TEST(ImageArgs, LoopValues) {
  const app::DeconvolutionOptions d =
      parse({"-niter", "0", "-nmiter", "7", "-gain", "0.05", "-mgain", "0.8", "-auto-mask", "5"}).deconvolution;
  EXPECT_EQ(d.nmiter, 7u);
  EXPECT_EQ(d.settings.gain, 0.05);
  EXPECT_EQ(d.mgain, 0.8);
  EXPECT_EQ(d.settings.auto_mask, 5.0);
  EXPECT_EQ(parse({"--gain", "0.2", "-gain", "0.3"}).deconvolution.settings.gain, 0.3);  // the last wins
}

TEST(ImageArgs, ThresholdUnitsAsWsclean) {
  const std::pair<const char*, double> cases[] = {{"0.01", 0.01},     {"2Jy", 2.0},      {"3 mJy", 3e-3},
                                                  {"1.5mjy", 1.5e-3}, {"20µJy", 20e-6}, {"7nJy", 7e-9},
                                                  {"1e-3", 1e-3},     {"2 jansky", 2.0}};
  for (const auto& [text, jy] : cases) {
    const app::DeconvolutionOptions d = parse({"-threshold", text}).deconvolution;
    EXPECT_NEAR(d.settings.threshold, jy, 1e-15 * jy) << text;
    EXPECT_EQ(d.settings.auto_threshold, 0.0) << text;
  }
  const app::DeconvolutionOptions both = parse({"-threshold", "1mJy", "-auto-threshold", "3"}).deconvolution;
  EXPECT_NEAR(both.settings.threshold, 1e-3, 1e-18);
  EXPECT_EQ(both.settings.auto_threshold, 3.0);
}

TEST(ImageArgs, MasksAndNoise) {
  test::TempDir dir;
  const std::string mask = write_mask(dir, 64, 64);
  const app::DeconvolutionOptions d =
      parse({"-local-rms-window", "30", "-fits-mask", mask, "-clean-border", "5", "-no-negative"}).deconvolution;
  EXPECT_TRUE(d.settings.local_rms.enabled);  // WSClean: the window turns -local-rms on
  EXPECT_EQ(d.settings.local_rms.window, 30.0);
  EXPECT_EQ(d.fits_mask, mask);
  EXPECT_EQ(d.settings.clean_border_percent, 5.0);
  EXPECT_FALSE(d.settings.allow_negative);
  EXPECT_TRUE(parse({"-no-negative", "-negative"}).deconvolution.settings.allow_negative);
}

TEST(ImageArgs, Multiscale) {
  const app::DeconvolutionOptions d = parse({"-multiscale", "-multiscale-scales", "0,4,12", "-multiscale-scale-bias",
                                             "0.7", "-multiscale-max-scales", "5", "-multiscale-gain", "0.15"})
                                          .deconvolution;
  EXPECT_TRUE(d.settings.multiscale.enabled);
  EXPECT_EQ(d.settings.multiscale.scales, (std::vector<double>{0, 4, 12}));
  EXPECT_EQ(d.settings.multiscale.scale_bias, 0.7);
  EXPECT_EQ(d.settings.multiscale.max_scales, 5u);
  EXPECT_EQ(d.settings.multiscale.gain, 0.15);
  EXPECT_EQ(d.settings.multiscale.shape, clean::ScaleShape::kTaperedQuadratic);
  // WSClean 3.1's -save-source-list switches the scales to Gaussians.
  const app::DeconvolutionOptions listed = parse({"-niter", "1", "-multiscale", "-save-source-list"}).deconvolution;
  EXPECT_TRUE(listed.save_source_list);
  EXPECT_EQ(listed.settings.multiscale.shape, clean::ScaleShape::kGaussian);
  // WSClean ignores the scale options without -multiscale.
  EXPECT_FALSE(parse({"-multiscale-gain", "0.3"}).deconvolution.settings.multiscale.enabled);
}

TEST(ImageArgs, ChannelsAndFits) {
  const app::DeconvolutionOptions d = parse({"-channels-out", "4", "-join-channels", "-fit-spectral-pol", "2",
                                             "-deconvolution-channels", "2"})
                                          .deconvolution;
  EXPECT_TRUE(d.settings.join_channels);
  EXPECT_EQ(d.settings.fit_spectral_pol, 2u);
  EXPECT_EQ(d.deconvolution_channels, 2u);
  // Not cleaned yet: refused with one line rather than ignored.
  expect_usage({"-channels-out", "4", "-join-channels", "-squared-channel-joining"}, "-squared-channel-joining");
  const app::DeconvolutionOptions log =
      parse({"-channels-out", "4", "-join-channels", "-fit-spectral-log-pol", "3"}).deconvolution;
  EXPECT_EQ(log.settings.fit_spectral_log_pol, 3u);
  EXPECT_EQ(log.settings.spectral_fit().terms, 3u);
  EXPECT_TRUE(log.settings.spectral_fit().logarithmic);
}

TEST(ImageArgs, BeamAndModelAndNotes) {
  const app::DeconvolutionOptions size = parse({"-beam-size", "10"}).deconvolution;
  ASSERT_TRUE(size.settings.beam_shape.has_value());
  EXPECT_NEAR(size.settings.beam_shape->bmaj_arcsec, 10.0, 1e-9);
  EXPECT_NEAR(size.settings.beam_shape->bmin_arcsec, 10.0, 1e-9);
  const app::DeconvolutionOptions shape = parse({"-beam-shape", "0.5amin", "12", "30"}).deconvolution;
  ASSERT_TRUE(shape.settings.beam_shape.has_value());
  EXPECT_NEAR(shape.settings.beam_shape->bmaj_arcsec, 30.0, 1e-9);
  EXPECT_NEAR(shape.settings.beam_shape->bmin_arcsec, 12.0, 1e-9);
  EXPECT_NEAR(shape.settings.beam_shape->bpa_deg, 30.0, 1e-9);
  EXPECT_FALSE(parse({"-no-update-model-required"}).deconvolution.update_model_required);
  const app::ImageOptions par = parse({"-parallel-deconvolution", "512", "-no-reorder"});
  EXPECT_EQ(par.deconvolution.parallel_deconvolution, 512u);
  ASSERT_EQ(par.notes.size(), 1u);  // -no-reorder is mapped: one note says how
  EXPECT_NE(par.notes[0].find("-no-reorder: gpuclean reads each MS once"), std::string::npos) << par.notes[0];
}

TEST(ImageArgs, BadValuesExitTwo) {
  expect_usage({"-gain", "-0.1"}, "-gain");
  expect_usage({"-mgain", "1.5"}, "-mgain");
  expect_usage({"-threshold", "3 mjansky"}, "unknown unit");
  expect_usage({"-threshold", "-1mJy"}, "-threshold");
  expect_usage({"-nmiter", "-1"}, "-nmiter");
  expect_usage({"-channels-out", "2", "-join-channels", "-fit-spectral-pol", "0"}, "-fit-spectral-pol");
  expect_usage({"-channels-out", "2", "-join-channels", "-fit-spectral-pol", "2", "-deconvolution-channels", "3"},
               "more than -channels-out");
  expect_usage({"-channels-out", "4", "-deconvolution-channels", "2"}, "needs a spectral fit");
  expect_usage({"-multiscale", "-multiscale-scale-bias", "2"}, "multiscale-scale-bias");
  expect_usage({"-beam-shape", "10", "-5", "0"}, "-beam-shape");
  expect_usage({"-beam-size", "10parsec"}, "-beam-size");
  expect_usage({"-iuwt"}, "-iuwt");
  expect_usage({"-local-rms-method", "median"}, "local-rms-method");
}

TEST(ImageArgs, FitsMaskIsCheckedWithExitThree) {
  test::TempDir dir;
  app::Failure missing = refusal({"-fits-mask", dir.file("none.fits")});
  EXPECT_EQ(missing.code, app::ExitCode::kInput) << missing.message;
  const std::string mask = write_mask(dir, 32, 64);
  app::Failure size = refusal({"-fits-mask", mask});
  EXPECT_EQ(size.code, app::ExitCode::kInput) << size.message;
  EXPECT_NE(size.message.find("32 x 64"), std::string::npos) << size.message;
}

TEST(ImageArgs, NiterOnEveryDevice) {
  EXPECT_EQ(parse({"-niter", "100", "-mgain", "0.8"}).deconvolution.niter, 100u);
  EXPECT_EQ(parse({"-niter", "100", "-mgain", "0.8", "-device", "gpu"}).device, clean::Device::kGpu);
  EXPECT_EQ(parse({"-niter", "100", "-device", "cpu"}).device, clean::Device::kCpu);
  expect_usage({"-niter", "100", "-device", "gpu", "-gain", "2"}, "-gain");
  // -predict ignores -niter, as WSClean does.
  EXPECT_TRUE(app::parse_image_args({"-predict", "-niter", "100", "a.ms"}).predict);
}

TEST(ImageArgs, JoinChannelsImpliesMfWeightingAsWsclean31) {
  // W31:main/commandline.cpp: mfWeighting = (joined && !-no-mf-weighting) || -mf-weighting, with
  // or without -niter (measured: -join-channels -niter 0 gives -mf-weighting's WSCIMGWG and beam).
  EXPECT_FALSE(parse({"-channels-out", "2"}).run.mf_weighting);
  EXPECT_TRUE(parse({"-channels-out", "2", "-join-channels"}).run.mf_weighting);
  EXPECT_TRUE(parse({"-channels-out", "2", "-join-channels", "-niter", "10"}).run.mf_weighting);
  EXPECT_FALSE(parse({"-channels-out", "2", "-join-channels", "-no-mf-weighting"}).run.mf_weighting);
  EXPECT_FALSE(parse({"-channels-out", "2", "-no-mf-weighting", "-join-channels"}).run.mf_weighting);
  EXPECT_TRUE(parse({"-channels-out", "2", "-mf-weighting", "-no-mf-weighting"}).run.mf_weighting);
  EXPECT_TRUE(parse({"-channels-out", "2", "-mf-weighting"}).run.mf_weighting);
}

TEST(ImageArgs, HelpListsEveryOption) {
  const std::string help = app::image_usage();
  for (const char* name :
       {"-niter", "-nmiter", "-gain", "-mgain", "-auto-threshold", "-auto-mask", "-local-rms",
        "-local-rms-window", "-fits-mask", "-multiscale", "-multiscale-scales", "-multiscale-scale-bias",
        "-multiscale-max-scales", "-multiscale-gain", "-join-channels", "-fit-spectral-pol", "-fit-spectral-log-pol",
        "-deconvolution-channels", "-squared-channel-joining", "-save-source-list", "-parallel-deconvolution",
        "-abs-threshold", "-mgain-boosting", "-auto-mask-nmiter", "-major-iteration-mode", "-skip-final-iteration",
        "-beam-size", "-beam-shape", "-no-update-model-required"})
    EXPECT_NE(help.find(std::string("\n  ") + name), std::string::npos) << name;
}

}  // namespace
}  // namespace gpuclean

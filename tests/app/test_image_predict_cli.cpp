// `gpuclean image -predict` (the binary) against Debian's `wsclean -predict -use-wgridder
// -no-small-inversion` (3.1): copies of one MS, the same model FITS files, MODEL_DATA compared cell
// by cell over every row, channel and correlation, so what each leaves alone (autocorrelation
// rows, XY/YX, channels outside -channel-range, a MODEL_DATA that held values) is compared too.
// Bad models and command lines fail with one line and leave the MS as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "app/image/image_args.hpp"
#include "clean/errors.hpp"
#include "tests/imaging/predict_test_files.hpp"

namespace gpuclean {
namespace {

using test::TempDir;

constexpr double kTolerance = 1e-4;  // max |Δ| / max |V| (plan §6)
constexpr double kScale = 20.0 / 3600 * M_PI / 180;
constexpr std::size_t kSize = 64;

/// Writes NAME-model.fits, or NAME-000c-model.fits for `channels_out` > 1, each its own model.
void write_models(const TempDir& dir, const std::string& name, std::size_t channels_out) {
  for (std::size_t c = 0; c < channels_out; ++c) {
    char tag[16];
    std::snprintf(tag, sizeof tag, "-%04zu", c);
    const std::string path = dir.file(name + (channels_out == 1 ? "" : tag) + "-model.fits");
    test::write_model_fits(path, test::test_model(kSize, kSize, static_cast<int>(c)), kSize, kSize,
                           test::model_wcs(kScale));
  }
}

struct Comparison {
  double worst = 0;          ///< max |Δ| / max |V| over the cells WSClean predicted
  std::size_t predicted = 0;  ///< cells that do not hold what they held before
  std::size_t kept = 0;       ///< cells both left as they were (7+7j with `prefill`)
};

/// Runs wsclean and gpuclean with `options` (`ours` added for gpuclean only) on copies of `ms`
/// and compares their MODEL_DATA. `fill`: predict_fixture.py fill's options for a MODEL_DATA the
/// MSs hold before ("7": every value 7+7j; "undefined": no cell defined), empty for none.
Comparison compare(const TempDir& dir, const std::string& ms, const std::string& options, const std::string& fill,
                   const std::string& ours = "") {
  const bool prefill = fill == "7";
  const std::string theirs_ms = dir.file("wsc.ms"), ours_ms = dir.file("gpc.ms");
  for (const std::string& copy : {theirs_ms, ours_ms}) {
    std::filesystem::remove_all(copy);
    std::filesystem::copy(ms, copy, std::filesystem::copy_options::recursive);
    if (!fill.empty())
      test::run_python(dir, test::source_dir() + "/tests/imaging/predict_fixture.py fill " + copy +
                                (prefill ? "" : " --undefined"));
  }
  const test::CommandResult w =
      test::run_command(dir, "wsclean -predict -use-wgridder -no-small-inversion -j 2 " + options + " " + theirs_ms);
  EXPECT_EQ(w.code, 0) << w.err;
  const test::CommandResult g = test::run_gpuclean(dir, "image -predict -j 2 " + options + " " + ours + " " + ours_ms);
  EXPECT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.err, "");
  const test::ModelData t = test::dump_model_data(dir, theirs_ms), o = test::dump_model_data(dir, ours_ms);
  EXPECT_TRUE(o.present);
  EXPECT_EQ(o.value.size(), t.value.size());
  Comparison c;
  double diff = 0, peak = 0;
  const std::complex<float> before = prefill ? std::complex<float>(7, 7) : 0;
  for (std::size_t i = 0; i < t.value.size() && i < o.value.size(); ++i) {
    if (t.value[i] == before) {
      EXPECT_EQ(o.value[i], before) << "cell " << i << ": WSClean left it, gpuclean wrote it";
      c.kept += o.value[i] == before;
      continue;
    }
    ++c.predicted;
    peak = std::max(peak, double{std::abs(t.value[i])});
    diff = std::max(diff, double{std::abs(o.value[i] - t.value[i])});
  }
  c.worst = diff / peak;
  std::printf("%s: MODEL_DATA %.2e of max|V| (%zu cells predicted, %zu left alone)\n", options.c_str(), c.worst,
              c.predicted, c.kept);
  return c;
}

TEST(ImagePredictCli, OneChannelAsWsclean) {
  // Flags, FLAG_ROW and autocorrelation rows: WSClean predicts flagged samples and leaves the
  // autocorrelations at 0. No -size/-scale: both take them from the model.
  TempDir dir;
  const std::string ms = test::make_predict_ms(dir, "a.ms", "xxyy", "--flags --flag-row --autocorrelations 4");
  write_models(dir, "m", 1);
  const Comparison c = compare(dir, ms, "-name " + dir.file("m"), "");
  EXPECT_LE(c.worst, kTolerance);
  EXPECT_EQ(c.predicted, 168u * 3 * 2);  // every cross-correlation row, flagged or not, XX and YY
}

TEST(ImagePredictCli, TwoOutputChannelsAsWsclean) {
  TempDir dir;
  const std::string ms = test::make_predict_ms(dir, "a.ms", "xxyy");
  write_models(dir, "m", 2);
  const Comparison c = compare(dir, ms, "-size 64 64 -scale 20asec -channels-out 2 -name " + dir.file("m"), "");
  EXPECT_LE(c.worst, kTolerance);
}

TEST(ImagePredictCli, FourCorrelationsChannelRangeAsWsclean) {
  // XX XY YX YY with a MODEL_DATA holding 7+7j: Stokes I goes to XX and YY of channels 1 and 2;
  // XY, YX, channel 0 and the autocorrelation rows keep 7+7j.
  TempDir dir;
  const std::string ms = test::make_predict_ms(dir, "a.ms", "full", "--autocorrelations 4");
  write_models(dir, "m", 1);
  const Comparison c = compare(dir, ms, "-channel-range 1 3 -name " + dir.file("m"), "7");
  EXPECT_LE(c.worst, kTolerance);
  EXPECT_EQ(c.predicted, 168u * 2 * 2);
  EXPECT_EQ(c.kept, 172u * 3 * 4 - c.predicted);
}

TEST(ImagePredictCli, PolXxAndCircularAsWsclean) {
  TempDir dir;
  write_models(dir, "m", 1);
  const std::string full = test::make_predict_ms(dir, "full.ms", "full");
  const Comparison xx = compare(dir, full, "-pol xx -name " + dir.file("m"), "7");
  EXPECT_LE(xx.worst, kTolerance);
  EXPECT_EQ(xx.predicted, 168u * 3);  // XX only
  const std::string rrll = test::make_predict_ms(dir, "rrll.ms", "rrll");
  const Comparison i = compare(dir, rrll, "-name " + dir.file("m"), "");
  EXPECT_LE(i.worst, kTolerance);
  EXPECT_EQ(i.predicted, 168u * 3 * 2);  // RR and LL
}

TEST(ImagePredictCli, UndefinedModelColumnResetAsWsclean) {
  // A MODEL_DATA whose cells hold no array: WSClean sets every cell to zero (DATA's shape) first.
  TempDir dir;
  const std::string ms = test::make_predict_ms(dir, "a.ms", "xxyy", "--autocorrelations 4");
  write_models(dir, "m", 1);
  const Comparison c = compare(dir, ms, "-name " + dir.file("m"), "undefined");
  EXPECT_LE(c.worst, kTolerance);
  EXPECT_EQ(c.kept, 4u * 3 * 2);  // the autocorrelation rows: zero in both
}

struct BadCase {
  std::string args;  ///< after "image -predict", before the MS
  int code;
  std::string says;  ///< a part of the one stderr line
};

TEST(ImagePredictCli, BadModelsFailWithOneLineAndLeaveTheMs) {
  TempDir dir;
  const std::string ms = test::make_predict_ms(dir, "a.ms", "xxyy");
  const std::vector<double> model = test::test_model(kSize, kSize);
  const auto write = [&](const std::string& name, std::size_t w, std::size_t h, test::ModelWcs wcs) {
    test::write_model_fits(dir.file(name + "-model.fits"), test::test_model(w, h), w, h, wcs);
  };
  write("ok", kSize, kSize, test::model_wcs(kScale));
  write("small", 32, 32, test::model_wcs(kScale));
  write("coarse", kSize, kSize, test::model_wcs(kScale * 1.01));  // 0.64 pixel over the image: WSClean refuses too
  write("shifted", kSize, kSize, test::model_wcs(kScale, 53.0, -28.0 + 0.1 * kScale * 180 / M_PI));
  write("offcentre", kSize, kSize, test::model_wcs(kScale, 53.0, -28.0, {{"CRPIX1", 40.0}}));
  std::vector<double> with_nan = model;
  with_nan[100] = NAN;
  test::write_model_fits(dir.file("nan-model.fits"), with_nan, kSize, kSize, test::model_wcs(kScale));
  test::write_model_fits(dir.file("two-0000-model.fits"), model, kSize, kSize, test::model_wcs(kScale));
  test::write_model_fits(dir.file("two-0001-model.fits"), test::test_model(32, 32), 32, 32, test::model_wcs(kScale));
  // The models are checked before the MS is opened (issue 46): five of them, for -channels-out 5
  // to meet the MS's 3 channels.
  for (const char* c : {"0000", "0001", "0002", "0003", "0004"})
    test::write_model_fits(dir.file(std::string("five-") + c + "-model.fits"), model, kSize, kSize,
                           test::model_wcs(kScale));
  const std::vector<BadCase> cases = {
      {"-name " + dir.file("absent"), 3, "absent-model.fits"},
      {"-size 64 64 -scale 20asec -name " + dir.file("small"), 3, "is 32x32 pixels; the run is 64x64"},
      {"-scale 20asec -name " + dir.file("coarse"), 3, "has pixels of 20.2 x 20.2 asec (-CDELT1, CDELT2); the run's -scale is 20 asec"},
      {"-name " + dir.file("shifted"), 3, "not on the phase centre"},
      {"-name " + dir.file("offcentre"), 3, "CRPIX1/2 = 40, 33, not at the image centre 33, 33"},
      {"-name " + dir.file("nan"), 3, "1 non-finite pixel(s)"},
      {"-channels-out 2 -name " + dir.file("two"), 3, "two-0001-model.fits' is 32x32 pixels"},
      {"-channels-out 2 -name " + dir.file("ok"), 3, "ok-0000-model.fits"},  // per-channel names
      {"-channels-out 5 -name " + dir.file("five"), 2, "more than the 3 selected channels"},
      {"-field 3 -name " + dir.file("ok"), 3, "3"},
      {"-name " + dir.file("ok") + " -pol iquv", 2, "-predict with several polarizations is not supported yet"},
  };
  const auto before = test::ms_bytes(ms);
  for (const BadCase& c : cases) {
    const test::CommandResult r = test::run_gpuclean(dir, "image -predict " + c.args + " " + ms);
    EXPECT_EQ(r.code, c.code) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(test::ms_bytes(ms) == before) << c.args << " changed the MS";
  }
  // The good model still works on the same MS (the cases above failed for their own reason).
  EXPECT_EQ(test::run_gpuclean(dir, "image -predict -name " + dir.file("ok") + " " + ms).code, 0);
  EXPECT_FALSE(test::ms_bytes(ms) == before);
}

TEST(ImagePredictCli, ParsesAsWsclean) {
  // WSClean's predict mode takes -size and -scale from the model and ignores -niter and -make-psf.
  const app::ImageOptions o = app::parse_image_args({"-predict", "-niter", "5", "-make-psf", "-name", "m", "a.ms"});
  EXPECT_TRUE(o.predict);
  EXPECT_EQ(o.run.image.width, 0u);
  EXPECT_EQ(o.run.image.scale, 0.0);
  // Without -predict, -niter is the major cycles' (on either device).
  EXPECT_EQ(app::parse_image_args({"-niter", "5", "-device", "gpu", "-size", "8", "8", "-scale", "1asec", "a.ms"}).niter, 5);
  EXPECT_THROW(app::parse_image_args({"-scale", "1asec", "a.ms"}), clean::InvalidSettings);  // no -size
}

}  // namespace
}  // namespace gpuclean

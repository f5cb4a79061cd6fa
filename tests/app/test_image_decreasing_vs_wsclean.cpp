// `gpuclean image -device cpu` on MSs whose channel frequencies decrease (issue 45: WSRT, ALMA lower
// sidebands, GMRT), against Debian's WSClean 3.1. WSClean sorts the channels by frequency
// (W31:main/wsclean.cpp makeImagingTable): -channels-out divides them in increasing frequency
// (output 0000 is the lowest), -channel-range counts in that order, and each output channel's
// MODEL_DATA goes back to its own MS channels (W31:structures/msselection.cpp SelectMsChannels).
//   Simulated: inc.ms (per-channel weights and flags, so a channel mapped to the wrong frequency
//   shows) and copies of it that list the channels in decreasing frequency, the same samples:
//   dec.ms, and decneg.ms whose CHAN_WIDTH is negative (as CASA stores lower sidebands).
//   - -niter 0 -make-psf -channels-out 2: dirty and PSF of both outputs and the MFS within 1e-4 of
//     the peak of WSClean's on the same MS, the frequency cards (CRVAL3, CDELT3) and counters equal;
//     gpuclean's images of dec.ms and decneg.ms within 1e-6 of its own of inc.ms;
//   - -channel-range 0 3: the three lowest frequencies, as WSClean;
//   - -channels-out 2 -join-channels -niter 200 -mgain 0.8: MODEL_DATA within 1e-4 of max|V| of
//     WSClean's, and within 1e-6 of gpuclean's on inc.ms with its channels reversed.
//   Real (tests/realdata, skipped without the archives): wsrt_3c343 (16 channels 1177.5 → 1175.2
//   MHz, positive widths) dirty/PSF as above and a joined clean's MODEL_DATA against WSClean's and
//   against gpuclean's on an increasing-order copy; alma_mssel's spw 1 (64 channels 86.29 → 84.32
//   GHz, CHAN_WIDTH −31.25 MHz; gpuclean reads the whole MS with -spws 1, WSClean a single-spw copy
//   of the same rows) dirty/PSF as above.
// Each program run takes 0.2-2 s on 2 cores; about 20 s in all. Skips when wsclean or
// python3-casacore is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/fits_reader.hpp"
#include "tests/app/image_vs_wsclean_support.hpp"
#include "tests/imaging/predict_test_files.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr double kPixels = 1e-4;  // dirty, PSF: max |g − w| / max |w|
constexpr double kModel = 1e-4;   // MODEL_DATA: max |g − w| / max |w|
constexpr double kSame = 1e-6;    // the same samples in the other channel order (float summation order)
constexpr double kCount = 1e-6;   // WSCIMGWG, WSCVWSUM, WSCENVIS: relative

const char* const kCommon = "-use-wgridder -no-small-inversion -weighting-rank-filter 0 -j 2";
const char* const kDirty = "-niter 0 -make-psf -channels-out 2";
const std::vector<std::string> kTags = {"-0000", "-0001", "-MFS"};

bool succeeds(const std::string& command) {
  const TempDir dir;
  return test::run_command(dir, command).code == 0;
}

double card(const io::FitsImage& f, const char* key) { return f.header.get_double(key).value_or(NAN); }

/// `gpuclean image -device cpu` (who 'g') or wsclean (who 'w') with kCommon, `options`, -name `name`.
void run(const TempDir& dir, char who, const std::string& options, const std::string& name, const std::string& ms) {
  const std::string line = std::string(kCommon) + " " + options + " -name " + dir.file(name) + " " + ms;
  const auto t0 = std::chrono::steady_clock::now();
  const test::CommandResult r = who == 'g' ? test::run_gpuclean(dir, "image -device cpu " + line)
                                           : test::run_command(dir, "wsclean " + line);
  ASSERT_EQ(r.code, 0) << (who == 'g' ? "gpuclean image " : "wsclean ") << line << ": " << r.err
                       << r.out.substr(r.out.size() > 2000 ? r.out.size() - 2000 : 0);
  std::printf("%s %s: %.2f s\n", who == 'g' ? "gpuclean" : "wsclean", name.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

/// Our PREFIX-{tag}-{dirty,psf}.fits against theirs: pixels within `bound` of the peak, the frequency
/// cards and counters as theirs. `what` names the comparison in the printed figures.
void compare_images(const TempDir& dir, const std::string& ours, const std::string& theirs,
                    const std::vector<std::string>& tags, double bound, const std::string& what) {
  for (const std::string& tag : tags)
    for (const char* kind : {"dirty", "psf"}) {
      const std::string suffix = tag + "-" + kind + ".fits";
      const io::FitsImage g = io::read_fits_image(dir.file(ours + suffix));
      const io::FitsImage w = io::read_fits_image(dir.file(theirs + suffix));
      const double d = test::max_difference(g, w);
      std::printf("%s %s: max|diff| / peak = %.3g; CRVAL3 %.10g CDELT3 %.10g (theirs %.10g %.10g)\n", what.c_str(),
                  suffix.c_str(), d, card(g, "CRVAL3"), card(g, "CDELT3"), card(w, "CRVAL3"), card(w, "CDELT3"));
      EXPECT_LE(d, bound) << what << " " << suffix;
      for (const char* key : {"CRVAL3", "CDELT3"})
        EXPECT_NEAR(card(g, key), card(w, key), 1e-12 * std::abs(card(w, key))) << what << " " << suffix << " " << key;
      EXPECT_EQ(card(g, "WSCNVIS"), card(w, "WSCNVIS")) << what << " " << suffix;
      for (const char* key : {"WSCIMGWG", "WSCVWSUM", "WSCENVIS"})
        EXPECT_NEAR(card(g, key), card(w, key), kCount * card(w, key)) << what << " " << suffix << " " << key;
      for (const char* key : {"WSCCHANS", "WSCCHANE"}) {
        EXPECT_EQ(g.header.has(key), w.header.has(key)) << what << " " << suffix << " " << key;
        if (w.header.has(key)) {
          EXPECT_EQ(card(g, key), card(w, key)) << what << " " << suffix << " " << key;
        }
      }
    }
}

/// max |a − b| / max |b| over MODEL_DATA, every row, channel and correlation; `reverse_a`: a's channels
/// taken in the other order.
double model_difference(const test::ModelData& a, const test::ModelData& b, bool reverse_a) {
  EXPECT_TRUE(a.present && b.present);
  EXPECT_EQ(a.value.size(), b.value.size());
  if (a.value.size() != b.value.size() || a.channels != b.channels) return INFINITY;
  double d = 0, peak = 0;
  for (std::size_t r = 0; r < b.rows; ++r)
    for (std::size_t c = 0; c < b.channels; ++c)
      for (std::size_t k = 0; k < b.correlations; ++k) {
        const std::complex<float> x = a.at(r, reverse_a ? b.channels - 1 - c : c, k), y = b.at(r, c, k);
        d = std::max(d, double{std::abs(x - y)});
        peak = std::max(peak, double{std::abs(y)});
      }
  EXPECT_GT(peak, 0);
  return d / peak;
}

/// A copy of `ms` as dir/NAME.ms, changed by ms_fixture.py edit's `edits` (none: a plain copy).
std::string copy_ms(const TempDir& dir, const std::string& ms, const std::string& name, const std::string& edits = "") {
  const std::string out = dir.file(name + ".ms");
  fs::remove_all(out);
  fs::copy(ms, out, fs::copy_options::recursive);
  if (!edits.empty()) test::run_python(dir, test::source_dir() + "/tests/io/ms_fixture.py edit " + out + " " + edits);
  return out;
}

class DecreasingVsWsclean : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!succeeds("command -v wsclean")) return;
    if (!succeeds(test::ms_python() + " -c 'import casacore.tables, numpy'")) return;
    sims_ = std::make_unique<TempDir>();
    const TempDir& d = *sims_;
    const std::string inc = test::simulate(
        d, "inc", "--sky points --antennas 16 --hours 0.5 --integration 120 --channels 8 --noise 0.01");
    test::run_python(d, test::source_dir() + "/tests/io/ms_fixture.py edit " + inc + " --weights --flags --weight-spectrum");
    copy_ms(d, inc, "dec", "--reverse-channels");
    copy_ms(d, inc, "decneg", "--reverse-channels --negative-width");
  }
  static void TearDownTestSuite() { sims_.reset(); }

  void SetUp() override {
    if (!succeeds("command -v wsclean")) GTEST_SKIP() << "no wsclean on PATH";
    if (!sims_) GTEST_SKIP() << "no python3-casacore for " << test::ms_python();
  }

  static std::string sim(const std::string& name) { return sims_->file(name + ".ms"); }

  static std::unique_ptr<TempDir> sims_;
  TempDir dir_;
};

std::unique_ptr<TempDir> DecreasingVsWsclean::sims_;

TEST_F(DecreasingVsWsclean, DirtyAndPsfPerChannelAndMfs) {
  const std::string options = std::string(kDirty) + " -size 256 256 -scale 4asec -weight briggs 0";
  run(dir_, 'g', options, "g-inc", sim("inc"));
  for (const char* name : {"dec", "decneg"}) {
    SCOPED_TRACE(name);
    run(dir_, 'g', options, std::string("g-") + name, sim(name));
    run(dir_, 'w', options, std::string("w-") + name, sim(name));
    compare_images(dir_, std::string("g-") + name, std::string("w-") + name, kTags, kPixels,
                   std::string(name) + " gpuclean vs WSClean");
  }
  // The same samples: dec.ms's images are inc.ms's, headers too (the MS's widths are positive).
  compare_images(dir_, "g-dec", "g-inc", kTags, kSame, "gpuclean dec vs inc");
  // Output 0000 is the lower half of the band.
  const io::FitsImage low = io::read_fits_image(dir_.file("g-dec-0000-dirty.fits"));
  const io::FitsImage high = io::read_fits_image(dir_.file("g-dec-0001-dirty.fits"));
  EXPECT_LT(card(low, "CRVAL3"), card(high, "CRVAL3"));
  // Negative CHAN_WIDTH: WSClean's band edges take the width's sign (W31: lowest − width/2 to highest +
  // width/2, the half channels at the edges counted inwards), so each output's CDELT3 is two channels
  // narrower than with positive widths (here 2 of 4), as gpuclean's.
  const io::FitsImage neg = io::read_fits_image(dir_.file("g-decneg-0000-dirty.fits"));
  EXPECT_NEAR(card(neg, "CDELT3"), card(low, "CDELT3") - 2 * 856e6 / 8, 1.0);
}

TEST_F(DecreasingVsWsclean, ChannelRangeCountsInIncreasingFrequency) {
  const std::string options = "-niter 0 -make-psf -size 256 256 -scale 4asec -weight briggs 0 -channel-range 0 3";
  run(dir_, 'g', options, "g-dec", sim("dec"));
  run(dir_, 'w', options, "w-dec", sim("dec"));
  compare_images(dir_, "g-dec", "w-dec", {""}, kPixels, "-channel-range 0 3 gpuclean vs WSClean");
  // The three lowest frequencies: inc.ms's channels 0-2.
  run(dir_, 'g', options, "g-inc", sim("inc"));
  compare_images(dir_, "g-dec", "g-inc", {""}, kSame, "-channel-range 0 3 gpuclean dec vs inc");
}

TEST_F(DecreasingVsWsclean, JoinedCleanWritesModelData) {
  const std::string options = "-size 256 256 -scale 4asec -weight briggs 0 -channels-out 2 -join-channels -niter 200 "
                              "-mgain 0.8";
  const std::string g_inc = copy_ms(dir_, sim("inc"), "g-inc"), g_dec = copy_ms(dir_, sim("dec"), "g-dec"),
                    w_dec = copy_ms(dir_, sim("dec"), "w-dec");
  run(dir_, 'g', options, "g-inc", g_inc);
  run(dir_, 'g', options, "g-dec", g_dec);
  run(dir_, 'w', options, "w-dec", w_dec);
  const test::ModelData gi = test::dump_model_data(dir_, g_inc), gd = test::dump_model_data(dir_, g_dec),
                        wd = test::dump_model_data(dir_, w_dec);
  const double vs_wsclean = model_difference(gd, wd, false), vs_inc = model_difference(gd, gi, true);
  const double unreversed = model_difference(gd, gi, false);
  std::printf("dec MODEL_DATA: gpuclean vs WSClean %.3g of max|V|; vs gpuclean on inc.ms, channels reversed %.3g "
              "(not reversed: %.3g)\n",
              vs_wsclean, vs_inc, unreversed);
  EXPECT_LE(vs_wsclean, kModel);
  EXPECT_LE(vs_inc, kSame);
  EXPECT_GT(unreversed, 100 * kModel);  // the channels' values differ: the order matters
}

// tests/realdata, prepared into dir/src (skips when the archives are missing, as
// test_realdata_vs_wsclean).
TEST_F(DecreasingVsWsclean, RealWsrtAndAlma) {
  const test::CommandResult p = test::run_command(
      dir_, test::ms_python() + " " + test::source_dir() + "/tests/realdata/prepare.py " + dir_.file("src") +
                " --archives " + test::shared_dir() + "/data/realdata --only wsrt_3c343 alma_mssel alma_mssel_f1spw1");
  if (p.code == 2) GTEST_SKIP() << "the archive is missing: " << p.err;
  ASSERT_EQ(p.code, 0) << p.err;
  std::printf("%s", p.out.c_str());

  // WSRT: 16 channels 1177.5 → 1175.2 MHz (λ/B = 59").
  const std::string wsrt = dir_.file("src/wsrt_3c343.ms");
  const std::string wsrt_options = "-size 256 256 -scale 15asec";
  run(dir_, 'g', std::string(kDirty) + " " + wsrt_options, "g-wsrt", wsrt);
  run(dir_, 'w', std::string(kDirty) + " " + wsrt_options, "w-wsrt", wsrt);
  compare_images(dir_, "g-wsrt", "w-wsrt", kTags, kPixels, "wsrt_3c343 gpuclean vs WSClean");
  // A joined clean: -niter 60, where both place every component on the same pixels (at -niter 200,
  // 3 of 129 components differ, on the increasing-order copy as well: 3.7e-3 of max|V|).
  const std::string clean = wsrt_options + " -channels-out 2 -join-channels -niter 60 -mgain 0.8";
  const std::string g_dec = copy_ms(dir_, wsrt, "g-wsrt-dec"), w_dec = copy_ms(dir_, wsrt, "w-wsrt-dec"),
                    g_inc = copy_ms(dir_, wsrt, "g-wsrt-inc", "--reverse-channels");
  run(dir_, 'g', clean, "g-wsrt-dec", g_dec);
  run(dir_, 'w', clean, "w-wsrt-dec", w_dec);
  run(dir_, 'g', clean, "g-wsrt-inc", g_inc);
  const test::ModelData gd = test::dump_model_data(dir_, g_dec), wd = test::dump_model_data(dir_, w_dec),
                        gi = test::dump_model_data(dir_, g_inc);
  const double vs_wsclean = model_difference(gd, wd, false), vs_inc = model_difference(gd, gi, true);
  const double unreversed = model_difference(gd, wd, true);
  std::printf("wsrt_3c343 MODEL_DATA: gpuclean vs WSClean %.3g of max|V| (WSClean's channels reversed: %.3g); vs "
              "gpuclean on the increasing copy, channels reversed %.3g\n",
              vs_wsclean, unreversed, vs_inc);
  EXPECT_LE(vs_wsclean, kModel);
  EXPECT_LE(vs_inc, kSame);
  EXPECT_GT(unreversed, 100 * kModel);

  // ALMA spw 1: 64 channels 86.29 → 84.32 GHz, CHAN_WIDTH −31.25 MHz (λ/B = 0.12"); gpuclean selects
  // it in the whole MS (its spw 2 rows have 1-channel cells), WSClean images the single-spw copy.
  const std::string alma_options = std::string(kDirty) + " -size 512 512 -scale 0.03asec -field 1";
  run(dir_, 'g', alma_options + " -spws 1", "g-alma", dir_.file("src/alma_mssel.ms"));
  run(dir_, 'w', alma_options, "w-alma", dir_.file("src/alma_mssel_f1spw1.ms"));
  compare_images(dir_, "g-alma", "w-alma", kTags, kPixels, "alma_mssel spw 1 gpuclean vs WSClean");
}

}  // namespace
}  // namespace gpuclean

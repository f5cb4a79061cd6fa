// `gpuclean image -pol` against Debian's WSClean 3.1 (issue 47) on simulated MSs of polarised
// sources (data/simulate_ms.py --sky polarized: fractional Q, U with rotation measures, V) with
// linear (XX, XY, YX, YY) and circular (RR, RL, LR, LL) feeds, no noise, 4 channels, 256² at 8″:
// - every Stokes dirty image equals WSClean's to 1e-4 of the Stokes I peak, and XX, YY, RR, LL, RL,
//   a single Q or V to 1e-4 of its own peak, with WSClean's CRVAL4 and file names (NAME-Q-dirty.fits, NAME-0000-U-image.fits,
//   NAME-MFS-V-dirty.fits; one PSF per channel without a polarization);
// - XY and YX (-niter 0; WSClean 3.1 images them only with -join-polarizations and cleaning) give
//   NAME-XY-* = WSClean's Stokes U and NAME-XYi-* = its V, as WSClean combines them;
// - IQUV cleaned each on its own (-niter 500 -mgain 0.8): each polarization's residual RMS and
//   model flux equal WSClean's to 1 %, and MODEL_DATA's four correlations WSClean's to 1e-4 of
//   max|V| (I + Q, U + iV, U − iV, I − Q written in WSClean's order), for both feeds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io/fits_reader.hpp"
#include "tests/app/image_vs_wsclean_support.hpp"
#include "tests/io/ms_test_files.hpp"
#include "tests/support/run_command.hpp"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const std::string kImage = "-size 256 256 -scale 8asec -use-wgridder -no-small-inversion ";

/// The CPU path (CI), or GPUCLEAN_TEST_IMAGE_DEVICE's device (gpu on the GPU machine).
std::string device() {
  const char* d = std::getenv("GPUCLEAN_TEST_IMAGE_DEVICE");
  return d && *d ? d : "cpu";
}

class ImagePolVsWsclean : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_ = std::make_unique<TempDir>();
    for (const char* feeds : {"linear", "circular"})
      test::run_python(*shared_, test::source_dir() + "/data/simulate_ms.py --out " + shared_->file(std::string(feeds) + ".ms") +
                                     " --sky polarized --correlations " + feeds +
                                     " --antennas 24 --hours 2 --integration 300 --channels 4 --noise 0");
  }
  static void TearDownTestSuite() { shared_.reset(); }

  /// A fresh copy of the feeds' MS in this test's folder.
  std::string copy(const std::string& feeds, const std::string& name) const {
    fs::copy(shared_->file(feeds + ".ms"), dir_.file(name), fs::copy_options::recursive);
    return dir_.file(name);
  }
  void gpuclean(const std::string& options, const std::string& name, const std::string& ms) const {
    const test::CommandResult r =
        test::run_gpuclean(dir_, "image -device " + device() + " " + kImage + options + " -name " + dir_.file(name) + " " + ms);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  void wsclean(const std::string& options, const std::string& name, const std::string& ms) const {
    const test::CommandResult r =
        test::run_command(dir_, "wsclean -quiet " + kImage + options + " -name " + dir_.file(name) + " " + ms);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  io::FitsImage read(const std::string& file) const { return io::read_fits_image(dir_.file(file)); }
  /// The FITS files whose names start with `prefix` + "-", with the prefix removed.
  std::set<std::string> files(const std::string& prefix) const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_.path())) {
      const std::string n = e.path().filename().string();
      if (n.rfind(prefix + "-", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".fits") out.insert(n.substr(prefix.size()));
    }
    return out;
  }
  double crval4(const std::string& file) const { return read(file).header.get_double("CRVAL4").value_or(0); }
  /// max |a − b| over `scale`, of two files of this folder.
  double difference(const std::string& a_file, const std::string& b_file, double scale) const {
    const io::FitsImage a = read(a_file), b = read(b_file);
    EXPECT_EQ(a.pixels.size(), b.pixels.size()) << a_file;
    double d = 0;
    for (std::size_t k = 0; k < a.pixels.size() && k < b.pixels.size(); ++k)
      d = std::max(d, std::abs(double(a.pixels[k]) - b.pixels[k]));
    return d / scale;
  }
  double peak(const std::string& file) const {
    double p = 0;
    for (float v : read(file).pixels) p = std::max(p, std::abs(double(v)));
    return p;
  }
  static double rms(const io::FitsImage& f) {
    double s = 0;
    for (float v : f.pixels) s += double(v) * v;
    return std::sqrt(s / f.pixels.size());
  }
  static double total(const io::FitsImage& f) {
    double s = 0;
    for (float v : f.pixels) s += v;
    return s;
  }

  TempDir dir_;
  static std::unique_ptr<TempDir> shared_;
};
std::unique_ptr<TempDir> ImagePolVsWsclean::shared_;

TEST_F(ImagePolVsWsclean, EveryStokesDirtyImageIsWscleans) {
  for (const std::string feeds : {"linear", "circular"}) {
    SCOPED_TRACE(feeds);
    const std::string ms = copy(feeds, feeds + ".ms"), g = "g" + feeds, w = "w" + feeds;
    gpuclean("-pol iquv -channels-out 2", g, ms);
    wsclean("-pol iquv -channels-out 2", w, ms);
    EXPECT_EQ(files(g), files(w));
    EXPECT_TRUE(files(g).count("-MFS-Q-dirty.fits"));
    EXPECT_TRUE(files(g).count("-0001-V-image.fits"));
    const double scale = peak(w + "-MFS-I-dirty.fits");
    for (const std::string pol : {"I", "Q", "U", "V"})
      for (const std::string c : {"-0000-", "-0001-", "-MFS-"}) {
        const std::string file = c + pol + "-dirty.fits";
        const double d = difference(g + file, w + file, scale);
        EXPECT_LT(d, 1e-4) << file;
        EXPECT_EQ(crval4(g + file), crval4(w + file)) << file;
        std::printf("%-8s %-18s max|g - w| / I peak %.2e, CRVAL4 %g\n", feeds.c_str(), file.c_str(), d,
                    crval4(g + file));
      }
  }
}

TEST_F(ImagePolVsWsclean, CorrelationsAndSingleProductsAreWscleans) {
  struct Case {
    std::string feeds, pol;
    std::vector<std::string> suffixes;  // the files compared
  };
  const std::vector<Case> cases = {{"linear", "xx,yy", {"-XX-dirty.fits", "-YY-dirty.fits"}},
                                   {"circular", "rr,ll", {"-RR-dirty.fits", "-LL-dirty.fits"}},
                                   {"circular", "rl", {"-dirty.fits"}},
                                   {"linear", "q", {"-dirty.fits"}},
                                   {"circular", "v", {"-dirty.fits"}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.feeds + " -pol " + c.pol);
    const std::string ms = copy(c.feeds, c.feeds + "-" + c.pol + ".ms");
    std::string tag = c.pol;
    std::erase(tag, ',');
    const std::string g = "g" + c.feeds + tag, w = "w" + c.feeds + tag;
    gpuclean("-pol " + c.pol, g, ms);
    wsclean("-pol " + c.pol, w, ms);
    EXPECT_EQ(files(g), files(w));
    // Each against its own peak: stricter than the Stokes I peak for RL, Q and V.
    for (const std::string& s : c.suffixes) {
      const double d = difference(g + s, w + s, peak(w + s));
      EXPECT_LT(d, 1e-4) << s;
      EXPECT_EQ(crval4(g + s), crval4(w + s)) << s;
      std::printf("%-8s -pol %-6s %-16s max|g - w| / peak %.2e, CRVAL4 %g\n", c.feeds.c_str(), c.pol.c_str(),
                  s.c_str(), d, crval4(g + s));
    }
  }
}

TEST_F(ImagePolVsWsclean, XyAndYxAreStokesUAndV) {
  const std::string ms = copy("linear", "l.ms");
  gpuclean("-pol xx,xy,yx,yy", "g", ms);
  wsclean("-pol iquv", "w", ms);
  EXPECT_EQ(files("g"), (std::set<std::string>{"-XX-dirty.fits", "-XX-image.fits", "-XY-dirty.fits", "-XY-image.fits",
                                                "-XYi-dirty.fits", "-XYi-image.fits", "-YY-dirty.fits", "-YY-image.fits"}));
  const double scale = peak("w-I-dirty.fits");
  EXPECT_LT(difference("g-XY-dirty.fits", "w-U-dirty.fits", scale), 1e-4);
  EXPECT_LT(difference("g-XYi-dirty.fits", "w-V-dirty.fits", scale), 1e-4);
  EXPECT_EQ(crval4("g-XY-dirty.fits"), -7);
  EXPECT_EQ(crval4("g-XYi-dirty.fits"), -7);
}

TEST_F(ImagePolVsWsclean, IquvCleanedOnTheirOwnAndModelDataAreWscleans) {
  for (const std::string feeds : {"linear", "circular"}) {
    SCOPED_TRACE(feeds);
    const std::string gms = copy(feeds, "g" + feeds + ".ms"), wms = copy(feeds, "w" + feeds + ".ms");
    const std::string options = "-pol iquv -niter 500 -mgain 0.8 -threshold 1e-3";
    gpuclean(options, "gc" + feeds, gms);
    wsclean(options, "wc" + feeds, wms);
    EXPECT_EQ(files("gc" + feeds), files("wc" + feeds));
    for (const std::string pol : {"I", "Q", "U", "V"}) {
      const io::FitsImage gr = read("gc" + feeds + "-" + pol + "-residual.fits"), wr = read("wc" + feeds + "-" + pol + "-residual.fits");
      const io::FitsImage gm = read("gc" + feeds + "-" + pol + "-model.fits"), wm = read("wc" + feeds + "-" + pol + "-model.fits");
      std::printf("%-8s %s: residual RMS %.4e / %.4e (%+.3f %%), model flux %+.5f / %+.5f Jy\n", feeds.c_str(),
                  pol.c_str(), rms(gr), rms(wr), 100 * (rms(gr) / rms(wr) - 1), total(gm), total(wm));
      EXPECT_NEAR(rms(gr) / rms(wr), 1.0, 0.01) << pol;
      EXPECT_NEAR(total(gm), total(wm), 0.01 * std::abs(total(wm)) + 1e-5) << pol;
    }
    const test::CommandResult d =
        test::run_command(dir_, test::ms_python() + " " + test::source_dir() + "/tests/app/model_column_diff.py " + gms + " " + wms);
    ASSERT_EQ(d.code, 0) << d.err;
    std::istringstream in(d.out);
    int corr = 0;
    for (double v; in >> v; ++corr) EXPECT_LT(v, 1e-4) << "correlation " << corr << ": " << d.out;
    EXPECT_EQ(corr, 4) << d.out;
    std::printf("%-8s MODEL_DATA max|g - w| / max|w| per correlation: %s", feeds.c_str(), d.out.c_str());
  }
}

}  // namespace
}  // namespace gpuclean

// `gpuclean quicklook A.fits B.fits -o panels.png`, driven as a user would: where each panel's
// pixels land, one stretch for every panel, titles, and the refusals (images of different sizes,
// an existing output, an output that names an input), each one line with its exit code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "io/png_writer.hpp"
#include "tests/io/fits_test_files.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/simulated_pair.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using gpuclean::test::count_lines;
using gpuclean::test::run_gpuclean;
using gpuclean::test::slurp;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Image {
  long width = 0, height = 0;
  std::vector<double> values;  ///< x fastest, FITS row 0 first
  double at(long x, long y) const { return values[static_cast<std::size_t>(y * width + x)]; }
};

template <class F>
Image make_image(long w, long h, F f) {
  Image im{w, h, {}};
  for (long y = 0; y < h; ++y)
    for (long x = 0; x < w; ++x) im.values.push_back(f(x, y));
  return im;
}

class QuicklookPanels : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const Image& im) const {
    gpuclean::test::RawFitsSpec spec;
    spec.axes = {im.width, im.height};
    gpuclean::test::write_raw_fits(tmp_.file(name), spec, im.values);
    return tmp_.file(name);
  }
  // {grey, alpha} at PNG column x, row y (rows from the top).
  static std::pair<int, int> pixel(const gpuclean::io::GreyAlphaImage& png, std::size_t x, std::size_t y) {
    const std::size_t i = 2 * (y * png.width + x);
    return {png.pixels[i], png.pixels[i + 1]};
  }
  gpuclean::test::TempDir tmp_;
};

}  // namespace

TEST_F(QuicklookPanels, PanelsSitSideBySideNorthUpWithAGap) {
  const long w = 8, h = 6;
  // Distinct values in [0, 1] everywhere, so every pixel's place can be told apart.
  const Image a = make_image(w, h, [](long x, long y) { return (x + 8.0 * y) / 63.0; });
  Image b = make_image(w, h, [](long x, long y) { return 1.0 - (x + 8.0 * y) / 63.0; });
  b.values[3 * 8 + 5] = kNaN;
  const std::string pa = write("a.fits", a), pb = write("b.fits", b), out = tmp_.file("p.png");
  const auto r = run_gpuclean(tmp_, "quicklook " + pa + " " + pb + " -o " + out + " --range 0 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 panels of 8x6"), std::string::npos) << r.out;
  const auto png = gpuclean::io::decode_png_grey_alpha(out);
  const std::size_t gap = 4;
  ASSERT_EQ(png.width, 2 * w + gap);
  ASSERT_EQ(png.height, static_cast<std::size_t>(h));
  for (long y = 0; y < h; ++y) {
    const std::size_t row = static_cast<std::size_t>(h - 1 - y);  // FITS row 0 is the PNG's bottom row
    for (long x = 0; x < w; ++x) {
      SCOPED_TRACE("x " + std::to_string(x) + ", y " + std::to_string(y));
      EXPECT_EQ(pixel(png, static_cast<std::size_t>(x), row),
                std::make_pair(static_cast<int>(std::lround(255 * a.at(x, y))), 255));
      const auto pb_px = pixel(png, static_cast<std::size_t>(x + w) + gap, row);
      if (std::isnan(b.at(x, y))) {
        EXPECT_EQ(pb_px.second, 0) << "NaN is transparent";
      } else {
        EXPECT_EQ(pb_px, std::make_pair(static_cast<int>(std::lround(255 * b.at(x, y))), 255));
      }
    }
    for (std::size_t g = 0; g < gap; ++g)
      EXPECT_EQ(pixel(png, static_cast<std::size_t>(w) + g, row), std::make_pair(255, 255)) << "gap column " << g;
  }
}

TEST_F(QuicklookPanels, OneStretchFromTheFirstImageForEveryPanel) {
  const long w = 20, h = 10;
  // A: 0 .. 1.99; B: ten times wider, with A's value at (3, 4) at (17, 2), and far above A's range.
  const Image a = make_image(w, h, [](long x, long y) { return (x + 20.0 * y) / 100.0; });
  Image b = make_image(w, h, [](long x, long y) { return 10.0 * (x + 20.0 * y) / 100.0; });
  b.values[2 * 20 + 17] = a.at(3, 4);
  const std::string pa = write("a.fits", a), pb = write("b.fits", b), out = tmp_.file("p.png");
  const auto r = run_gpuclean(tmp_, "quicklook " + pa + " " + pb + " -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto png = gpuclean::io::decode_png_grey_alpha(out);
  ASSERT_EQ(png.width, 2 * w + 4);
  const auto in_a = pixel(png, 3, h - 1 - 4), in_b = pixel(png, w + 4 + 17, h - 1 - 2);
  EXPECT_EQ(in_a, in_b) << "one value, one grey, in both panels";
  EXPECT_GT(in_a.first, 0);
  EXPECT_LT(in_a.first, 255);
  // The stretch is A's 0.5 and 99.5 percentiles (nearest rank of 200 values: ranks 1 and 198,
  // values 0.01 and 1.98), not B's: most of B is white.
  EXPECT_EQ(pixel(png, 0, h - 1).first, 0);                       // A's 0 is below 0.01
  EXPECT_EQ(pixel(png, 1, h - 1).first, 0);                       // 0.01: black
  EXPECT_EQ(pixel(png, 18, 0).first, 255);                        // 1.98: white
  EXPECT_EQ(pixel(png, 5, h - 1 - 5).first, std::lround(255 * (1.05 - 0.01) / 1.97));
  EXPECT_EQ(pixel(png, w + 4 + 10, h - 1 - 3).first, 255);        // B's 7.0
  EXPECT_EQ(pixel(png, w + 4 + 2, h - 1).first, std::lround(255 * (0.2 - 0.01) / 1.97));
  EXPECT_NE(r.out.find("percentiles 0.5 and 99.5"), std::string::npos) << r.out;
}

TEST_F(QuicklookPanels, TitlesGoInAStripAbovePanels) {
  const long w = 64, h = 8;
  const Image a = make_image(w, h, [](long, long) { return 0.0; });
  const Image b = make_image(w, h, [](long, long) { return 1.0; });
  const std::string pa = write("a.fits", a), pb = write("b.fits", b), out = tmp_.file("p.png");
  const auto r = run_gpuclean(tmp_, "quicklook " + pa + " " + pb + " -o " + out + " --range 0 1 --titles Clark,Multiscale");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto png = gpuclean::io::decode_png_grey_alpha(out);
  ASSERT_EQ(png.width, 2 * w + 4);
  ASSERT_GT(png.height, static_cast<std::size_t>(h));
  const std::size_t strip = png.height - h;
  std::size_t ink[2] = {0, 0};
  for (std::size_t y = 0; y < strip; ++y)
    for (std::size_t x = 0; x < png.width; ++x) {
      const auto p = pixel(png, x, y);
      EXPECT_EQ(p.second, 255);
      if (p.first == 0) ++ink[x < static_cast<std::size_t>(w) ? 0 : 1];
    }
  EXPECT_GT(ink[0], 10u) << "a title above the first panel";
  EXPECT_GT(ink[1], 10u) << "a title above the second panel";
  EXPECT_EQ(pixel(png, 0, strip), std::make_pair(0, 255)) << "the first panel starts below the strip";
  EXPECT_EQ(pixel(png, w + 4, png.height - 1), std::make_pair(255, 255));

  const auto bad = run_gpuclean(tmp_, "quicklook " + pa + " " + pb + " -o " + tmp_.file("q.png") + " --titles Clark");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--titles has 1 title for 2 images"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(tmp_.file("q.png")));
}

TEST_F(QuicklookPanels, ImagesOfDifferentSizesAreRefused) {
  const std::string pa = write("a.fits", make_image(8, 6, [](long, long) { return 1.0; }));
  const std::string pb = write("b.fits", make_image(6, 8, [](long, long) { return 1.0; }));
  const auto r = run_gpuclean(tmp_, "quicklook " + pa + " " + pb + " -o " + tmp_.file("p.png"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("'" + pa + "' is 8x6"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'" + pb + "' is 6x8"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp_.file("p.png")));
}

TEST_F(QuicklookPanels, NeverReplacesAFileWithoutOverwriteNorAnInputAtAll) {
  const std::string pa = write("a.fits", make_image(8, 6, [](long x, long) { return x; }));
  const std::string pb = write("b.fits", make_image(8, 6, [](long, long y) { return y; }));
  const std::string out = tmp_.file("p.png");
  std::ofstream(out) << "keep me";
  const auto r = run_gpuclean(tmp_, "quicklook " + pa + " " + pb + " -o " + out);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--overwrite"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(out), "keep me");

  const std::string before = slurp(pb);
  const auto onto_input = run_gpuclean(tmp_, "quicklook " + pa + " " + pb + " -o " + pb + " --overwrite");
  EXPECT_EQ(onto_input.code, 2) << onto_input.err;
  EXPECT_EQ(count_lines(onto_input.err), 1) << onto_input.err;
  EXPECT_NE(onto_input.err.find("never writes over an input"), std::string::npos) << onto_input.err;
  EXPECT_EQ(slurp(pb), before);

  const auto ok = run_gpuclean(tmp_, "quicklook " + pa + " " + pb + " -o " + out + " --overwrite");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(gpuclean::io::decode_png_grey_alpha(out).width, 20u);
  EXPECT_EQ(std::vector<std::string>({"a.fits", "b.fits", "p.png", "stderr.txt", "stdout.txt"}), [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(tmp_.path())) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }()) << "no temporary file is left";
}

TEST_F(QuicklookPanels, SettingsAndInputsAreCheckedWithTheirExitCodes) {
  const std::string pa = write("a.fits", make_image(8, 6, [](long x, long) { return x; }));
  const std::string out = tmp_.file("p.png");
  const auto expect = [&](const std::string& args, int code, const std::string& message) {
    const auto r = run_gpuclean(tmp_, "quicklook " + args);
    EXPECT_EQ(r.code, code) << args << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  };
  expect(pa + " " + pa + " -o " + out + " --percentiles 99 1", 2, "--percentiles LO HI must satisfy");
  expect(pa + " " + pa + " -o " + out + " --range 1 1", 2, "--range MIN MAX needs finite MIN < MAX");
  expect(pa + " " + pa + " -o " + out + " --range 0 1 --percentiles 1 99", 2, "excludes");
  expect(pa + " -o " + out + " " + tmp_.file("missing.fits"), 3, "missing.fits");
  expect(pa + " " + pa, 2, "--output");
  const std::string nan = write("nan.fits", make_image(8, 6, [](long, long) { return kNaN; }));
  expect(nan + " " + pa + " -o " + out, 3, "has no finite pixel");
  EXPECT_EQ(run_gpuclean(tmp_, "quicklook " + nan + " " + pa + " -o " + out + " --range 0 1").code, 0);
}

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "io/fits_error.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "tests/io/fits_test_files.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/temp_dir.hpp"

namespace gio = gpuclean::io;
using gpuclean::test::RawFitsSpec;
using gpuclean::test::TempDir;
using gpuclean::test::write_raw_fits;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct BitpixCase {
  int bitpix;
  double bscale, bzero;
  bool blank;
};

std::vector<double> sample_values(const BitpixCase& c, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = (static_cast<double>(i % 7) - 3.0) * c.bscale + c.bzero + (c.bitpix == 8 ? 3 * c.bscale : 0);
  if (c.blank || c.bitpix < 0) v[5] = kNaN;
  return v;
}
}  // namespace

class FitsBitpix : public ::testing::TestWithParam<BitpixCase> {};

TEST_P(FitsBitpix, ReadsPhysicalValuesAndBlanks) {
  const BitpixCase c = GetParam();
  TempDir dir;
  RawFitsSpec spec;
  spec.bitpix = c.bitpix;
  spec.axes = {4, 3};
  spec.bscale = c.bscale;
  spec.bzero = c.bzero;
  spec.blank = c.blank;
  spec.blank_value = c.bitpix == 8 ? 255 : -99;
  const auto values = sample_values(c, 12);
  write_raw_fits(dir.file("in.fits"), spec, values);

  const gio::FitsImage img = gio::read_fits_image(dir.file("in.fits"));
  EXPECT_EQ(img.bitpix, c.bitpix);
  ASSERT_EQ(img.width, 4u);
  ASSERT_EQ(img.height, 3u);
  std::size_t nans = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      EXPECT_TRUE(std::isnan(img.pixels[i])) << "pixel " << i;
      ++nans;
    } else {
      EXPECT_NEAR(img.pixels[i], values[i], 1e-5 * std::max(1.0, std::abs(values[i]))) << "pixel " << i;
    }
  }
  EXPECT_EQ(img.nan_count, nans);
}

INSTANTIATE_TEST_SUITE_P(AllBitpix, FitsBitpix,
                         ::testing::Values(BitpixCase{8, 1.0, 0.0, true}, BitpixCase{16, 0.5, 10.0, true},
                                           BitpixCase{32, 1e-3, -2.0, true}, BitpixCase{-32, 1.0, 0.0, false},
                                           BitpixCase{-64, 1.0, 0.0, false}, BitpixCase{16, 1.0, 0.0, false}),
                         [](const auto& p) {
                           const auto& c = p.param;
                           return "bitpix" + std::string(c.bitpix < 0 ? "m" : "") + std::to_string(std::abs(c.bitpix)) +
                                  (c.bscale != 1.0 ? "_scaled" : "") + (c.blank ? "_blank" : "");
                         });

class FitsNaxis : public ::testing::TestWithParam<std::vector<long>> {};

TEST_P(FitsNaxis, RoundTripKeepsShapeAndHeader) {
  TempDir dir;
  RawFitsSpec spec;
  spec.axes = GetParam();
  std::vector<double> values(static_cast<std::size_t>(spec.axes[0] * spec.axes[1]));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.25 * static_cast<double>(i);
  values[2] = kNaN;
  write_raw_fits(dir.file("in.fits"), spec, values);

  const gio::FitsImage in = gio::read_fits_image(dir.file("in.fits"));
  EXPECT_EQ(in.axes, spec.axes);
  // The shape alone (batch planning) says the same, and reads no pixels.
  const gio::FitsImage shape = gio::read_fits_shape(dir.file("in.fits"));
  EXPECT_EQ(shape.axes, spec.axes);
  EXPECT_EQ(shape.width, in.width);
  EXPECT_EQ(shape.height, in.height);
  EXPECT_EQ(shape.bitpix, in.bitpix);
  EXPECT_TRUE(shape.pixels.empty());
  gio::WriteOptions opt;
  opt.bunit = "JY/BEAM";
  opt.beam = gio::BeamKeywords{0.002, 0.001, 45.0};
  opt.keywords.push_back({"GCGAIN", 0.1, "loop gain"});
  opt.history.push_back("written by the round-trip test");
  gio::write_fits_image(dir.file("out.fits"), in.pixels.data(), in.width, in.height, in.header, in.axes, opt);

  const gio::FitsImage out = gio::read_fits_image(dir.file("out.fits"));
  EXPECT_EQ(out.axes, spec.axes);
  EXPECT_EQ(out.bitpix, -32);
  ASSERT_EQ(out.pixels.size(), in.pixels.size());
  for (std::size_t i = 0; i < in.pixels.size(); ++i) {
    if (std::isnan(in.pixels[i])) {
      EXPECT_TRUE(std::isnan(out.pixels[i]));
    } else {
      EXPECT_EQ(out.pixels[i], in.pixels[i]);
    }
  }
  EXPECT_EQ(out.header.get_string("CTYPE1").value_or(""), "RA---SIN");
  EXPECT_EQ(out.header.get_string("TELESCOP").value_or(""), "TESTSCOPE");
  EXPECT_DOUBLE_EQ(out.header.get_double("RESTFRQ").value_or(0), 1.420405752e9);
  EXPECT_DOUBLE_EQ(out.header.get_double("CRPIX1").value_or(0), 2.0);
  EXPECT_EQ(out.header.get_string("BUNIT").value_or(""), "JY/BEAM");
  EXPECT_DOUBLE_EQ(out.header.get_double("BMAJ").value_or(0), 0.002);
  EXPECT_DOUBLE_EQ(out.header.get_double("BPA").value_or(0), 45.0);
  EXPECT_DOUBLE_EQ(out.header.get_double("GCGAIN").value_or(0), 0.1);
  int history = 0;
  for (const auto& card : out.header.cards())
    if (card.rfind("HISTORY", 0) == 0) ++history;
  EXPECT_EQ(history, 2) << "the input's HISTORY and ours";
}

INSTANTIATE_TEST_SUITE_P(Naxis2To4, FitsNaxis,
                         ::testing::Values(std::vector<long>{5, 4}, std::vector<long>{5, 4, 1},
                                           std::vector<long>{5, 4, 1, 1}));

TEST(FitsReader, ReadsTheFirstImageExtensionWhenThePrimaryIsEmpty) {
  TempDir dir;
  RawFitsSpec spec;
  spec.in_extension = true;
  write_raw_fits(dir.file("ext.fits"), spec, std::vector<double>(12, 1.5));
  const auto img = gio::read_fits_image(dir.file("ext.fits"));
  EXPECT_EQ(img.width, 4u);
  EXPECT_EQ(img.pixels[11], 1.5f);
  EXPECT_EQ(img.header.get_string("TELESCOP").value_or(""), "TESTSCOPE");
}

TEST(FitsReader, RefusesMoreThanOnePlane) {
  TempDir dir;
  RawFitsSpec spec;
  spec.axes = {4, 3, 2, 1};
  write_raw_fits(dir.file("cube.fits"), spec, std::vector<double>(24, 0.0));
  try {
    gio::read_fits_image(dir.file("cube.fits"));
    FAIL() << "a cube was accepted";
  } catch (const gio::FitsError& e) {
    EXPECT_EQ(e.kind(), gio::FitsError::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("more than one plane"), std::string::npos) << e.what();
  }
}

TEST(FitsReader, ReadsARealWscleanImage) {
  const std::string path = gpuclean::test::shared_dir() + "/data/wsclean-256/meerkat-cdfs-256-dirty.fits";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared WSClean data not present";
  const auto img = gio::read_fits_image(path);
  EXPECT_EQ(img.axes, (std::vector<long>{256, 256, 1, 1}));
  EXPECT_EQ(img.header.get_string("CTYPE3").value_or(""), "FREQ");
  EXPECT_EQ(img.header.get_string("WSCVERSI").value_or(""), "3.1.0");
  EXPECT_NEAR(img.header.get_double("BMAJ").value_or(0) * 3600, 7.44, 0.01);
}

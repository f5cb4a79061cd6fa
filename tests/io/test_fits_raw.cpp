// The raw pixel paths (io/fits_raw.hpp) against CFITSIO's: reads bit for bit equal to
// fits_read_pixnull's conversion (NaN, ±Inf, ±0, denormals, doubles), scaled and integer images
// still on CFITSIO, written files that pass fits_verify_chksum and read back exactly, truncated
// files refused, threads, and staged outputs that appear all or none.

#include <fitsio.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "io/fits_cube.hpp"
#include "io/fits_error.hpp"
#include "io/fits_raw.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "io/publish.hpp"
#include "io/staged_outputs.hpp"
#include "tests/io/fits_test_files.hpp"
#include "tests/support/temp_dir.hpp"

namespace gio = gpuclean::io;
using gpuclean::test::TempDir;

namespace {

// Restores the process-wide switch, whatever a test does.
struct RawIo {
  explicit RawIo(bool on) { gio::set_fits_raw_io(on); }
  ~RawIo() { gio::set_fits_raw_io(true); }
};

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Writes `values` as stored, with CFITSIO and no null handling (so ±Inf, -0 and denormals stay).
template <typename T>
void write_plain(const std::string& path, int bitpix, long width, long height, const std::vector<T>& values,
                 double bscale = 1.0) {
  int status = 0;
  fitsfile* f = nullptr;
  fits_create_diskfile(&f, path.c_str(), &status);
  long axes[2] = {width, height};
  fits_create_img(f, bitpix, 2, axes, &status);
  if (bscale != 1.0) {
    fits_write_key_dbl(f, "BSCALE", bscale, -12, "", &status);
    fits_set_bscale(f, 1.0, 0.0, &status);  // store the values as given
  }
  fits_write_img(f, sizeof(T) == 4 ? TFLOAT : TDOUBLE, 1, static_cast<LONGLONG>(values.size()),
                 const_cast<T*>(values.data()), &status);
  fits_close_file(f, &status);
  ASSERT_EQ(status, 0);
}

struct Read {
  std::vector<std::uint32_t> pixels;
  std::size_t nans = 0;
  std::string error;
};

Read read_with(const std::string& path, bool raw) {
  RawIo mode(raw);
  Read r;
  try {
    const gio::FitsImage img = gio::read_fits_image(path);
    for (float v : img.pixels) r.pixels.push_back(bits(v));
    r.nans = img.nan_count;
  } catch (const gio::FitsError& e) {
    r.error = e.what();
  }
  return r;
}

// Values whose conversion CFITSIO special-cases, among ordinary ones.
std::vector<float> special_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {1.5f, -2.25f, std::numeric_limits<float>::quiet_NaN(), inf, -inf, -0.0f, 0.0f,
                          1e-40f /* denormal */, -1e-42f, FLT_MAX, -FLT_MAX, FLT_MIN, from_bits(0x7f800001u),
                          from_bits(0xffc00000u), 3.0e-39f};
  for (int i = 0; i < 300; ++i) v.push_back(std::sin(0.37f * static_cast<float>(i)) * 1e3f);
  return v;
}

std::pair<int, int> verify_checksums(const std::string& path, int hdu) {
  int status = 0, type = 0, data_ok = 0, hdu_ok = 0;
  fitsfile* f = nullptr;
  fits_open_diskfile(&f, path.c_str(), READONLY, &status);
  fits_movabs_hdu(f, hdu, &type, &status);
  fits_verify_chksum(f, &data_ok, &hdu_ok, &status);
  fits_close_file(f, &status);
  EXPECT_EQ(status, 0) << path;
  return {data_ok, hdu_ok};
}

// CFITSIO's own read, without null checking: the stored bits.
std::vector<std::uint32_t> cfitsio_bits(const std::string& path, std::size_t n) {
  std::vector<float> out(n);
  int status = 0, any = 0;
  fitsfile* f = nullptr;
  fits_open_diskfile(&f, path.c_str(), READONLY, &status);
  fits_read_img(f, TFLOAT, 1, static_cast<LONGLONG>(n), nullptr, out.data(), &any, &status);
  fits_close_file(f, &status);
  EXPECT_EQ(status, 0);
  std::vector<std::uint32_t> b;
  for (float v : out) b.push_back(bits(v));
  return b;
}

// Axis 3 as FREQ, axis 4 as STOKES: what the cube reader asks for.
gio::FitsHeader freq_header() {
  gio::FitsHeader h;
  h.set_string("CTYPE3", "FREQ");
  h.set_double("CRPIX3", 1.0);
  h.set_double("CRVAL3", 1.4e9);
  h.set_double("CDELT3", 1e6);
  h.set_string("CTYPE4", "STOKES");
  return h;
}

}  // namespace

TEST(FitsRaw, Float32ReadsAsCfitsioDoes) {
  TempDir dir;
  const auto v = special_floats();
  write_plain(dir.file("f.fits"), FLOAT_IMG, static_cast<long>(v.size()) / 5, 5, v);
  const Read raw = read_with(dir.file("f.fits"), true), old = read_with(dir.file("f.fits"), false);
  ASSERT_EQ(raw.error, "");
  ASSERT_EQ(old.error, "");
  EXPECT_EQ(raw.pixels, old.pixels);  // bit for bit: NaN/Inf as NaN, -0 and denormals as +0
  EXPECT_EQ(raw.nans, old.nans);
  EXPECT_EQ(old.nans, 5u);
}

TEST(FitsRaw, Float64ReadsAsCfitsioDoes) {
  TempDir dir;
  std::vector<double> v;
  for (float f : special_floats()) v.push_back(f);
  // Double-only cases: below float's range, a double denormal, rounding to float.
  for (double d : {1e-300, 5e-324, -1e-310, 0.1, 1.0 / 3.0, 3.4028234e38, -7e-46}) v.push_back(d);
  while (v.size() % 4) v.push_back(2.0);
  write_plain(dir.file("d.fits"), DOUBLE_IMG, static_cast<long>(v.size()) / 4, 4, v);
  const Read raw = read_with(dir.file("d.fits"), true), old = read_with(dir.file("d.fits"), false);
  ASSERT_EQ(old.error, "");
  EXPECT_EQ(raw.error, "");
  EXPECT_EQ(raw.pixels, old.pixels);
  EXPECT_EQ(raw.nans, old.nans);
}

// CFITSIO versions differ here (Debian 12's 4.2.0 returns ±Inf, trixie's refuses with an
// overflow error): the raw path leaves such a file to CFITSIO, so both read it alike.
TEST(FitsRaw, Float64BeyondFloatRangeReadsAsCfitsioDoes) {
  TempDir dir;
  write_plain(dir.file("big.fits"), DOUBLE_IMG, 4, 1, std::vector<double>{1.0, 1e39, -1e300, 3.0});
  const Read raw = read_with(dir.file("big.fits"), true), old = read_with(dir.file("big.fits"), false);
  EXPECT_EQ(raw.error, old.error);
  EXPECT_EQ(raw.pixels, old.pixels);
  EXPECT_EQ(raw.nans, old.nans);
}

TEST(FitsRaw, LargerThanOneChunkReadsAsCfitsioDoes) {
  TempDir dir;
  std::vector<float> v(1100 * 1000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 977) - 300.0f;
  v[1048576] = std::numeric_limits<float>::quiet_NaN();  // the second chunk's first pixel
  write_plain(dir.file("big.fits"), FLOAT_IMG, 1100, 1000, v);
  const Read raw = read_with(dir.file("big.fits"), true), old = read_with(dir.file("big.fits"), false);
  EXPECT_EQ(raw.pixels, old.pixels);
  EXPECT_EQ(raw.nans, 1u);
}

// Scaled floats and integers with BSCALE/BZERO/BLANK are not raw: CFITSIO converts them.
TEST(FitsRaw, ScaledAndIntegerImagesStayOnCfitsio) {
  TempDir dir;
  write_plain(dir.file("scaled.fits"), FLOAT_IMG, 3, 1, std::vector<float>{1.0f, 2.0f, -4.0f}, 2.0);
  const Read scaled = read_with(dir.file("scaled.fits"), true);
  ASSERT_EQ(scaled.error, "");
  EXPECT_EQ(scaled.pixels, (std::vector<std::uint32_t>{bits(2.0f), bits(4.0f), bits(-8.0f)}));

  gpuclean::test::RawFitsSpec spec;
  spec.bitpix = 16;
  spec.axes = {4, 2};
  spec.bscale = 0.5;
  spec.bzero = 10.0;
  spec.blank = true;
  spec.blank_value = -99;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  gpuclean::test::write_raw_fits(dir.file("i16.fits"), spec, {10.0, 10.5, nan, 9.0, 0.0, 20.0, nan, 11.5});
  const Read raw = read_with(dir.file("i16.fits"), true), old = read_with(dir.file("i16.fits"), false);
  ASSERT_EQ(raw.error, "");
  EXPECT_EQ(raw.pixels, old.pixels);
  EXPECT_EQ(raw.nans, 2u);
  EXPECT_EQ(from_bits(raw.pixels[1]), 10.5f);
  EXPECT_TRUE(std::isnan(from_bits(raw.pixels[2])));
}

TEST(FitsRaw, TruncatedFilesAreRefusedAsBefore) {
  TempDir dir;
  std::vector<float> v(64 * 64, 1.0f);
  write_plain(dir.file("t.fits"), FLOAT_IMG, 64, 64, v);
  ASSERT_EQ(::truncate(dir.file("t.fits").c_str(), 2880 + 64 * 64 * 4 - 100), 0);
  const Read raw = read_with(dir.file("t.fits"), true), old = read_with(dir.file("t.fits"), false);
  EXPECT_NE(raw.error.find("is truncated or its header is wrong"), std::string::npos) << raw.error;
  EXPECT_EQ(raw.error, old.error);
  // read_fits_image_into refuses before asking for a buffer.
  bool asked = false;
  EXPECT_THROW(gio::read_fits_image_into(dir.file("t.fits"), [&](std::size_t) -> float* {
    asked = true;
    return nullptr;
  }),
               gio::FitsError);
  EXPECT_FALSE(asked);
}

TEST(FitsRaw, ReadIntoACallersBuffer) {
  TempDir dir;
  const auto v = special_floats();
  write_plain(dir.file("f.fits"), FLOAT_IMG, static_cast<long>(v.size()), 1, v);
  std::vector<float> buffer;
  const gio::FitsImage img = gio::read_fits_image_into(dir.file("f.fits"), [&](std::size_t n) {
    buffer.resize(n);
    return buffer.data();
  });
  EXPECT_TRUE(img.pixels.empty());
  EXPECT_EQ(img.width, v.size());
  const Read whole = read_with(dir.file("f.fits"), true);
  std::vector<std::uint32_t> got;
  for (float x : buffer) got.push_back(bits(x));
  EXPECT_EQ(got, whole.pixels);
  EXPECT_EQ(img.nan_count, whole.nans);
}

// Sizes whose data end inside a block, exactly on one, and span two write chunks.
class FitsRawWrite : public ::testing::TestWithParam<std::pair<long, long>> {};

TEST_P(FitsRawWrite, PassesChecksumsAndReadsBackExactly) {
  const auto [w, h] = GetParam();
  TempDir dir;
  std::vector<float> v(static_cast<std::size_t>(w * h));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::cos(0.01f * static_cast<float>(i)) * 7.0f;
  v[0] = std::numeric_limits<float>::quiet_NaN();
  v[v.size() - 1] = -0.0f;
  gio::FitsHeader header;
  header.set_string("CTYPE1", "RA---SIN");
  header.set_double("CDELT1", -1e-4);
  gio::WriteOptions o;
  o.history = {"written by test_fits_raw"};
  for (int i = 0; i < 40; ++i) o.history.push_back("a header of several blocks, line " + std::to_string(i));
  o.beam = gio::BeamKeywords{1e-3, 5e-4, 30.0};
  {
    RawIo raw(true);
    gio::write_fits_image(dir.file("raw.fits"), v.data(), w, h, header, {w, h, 1, 1}, o);
  }
  {
    RawIo old(false);
    gio::write_fits_image(dir.file("old.fits"), v.data(), w, h, header, {w, h, 1, 1}, o);
  }
  EXPECT_EQ(verify_checksums(dir.file("raw.fits"), 1), std::make_pair(1, 1));
  const std::size_t data = v.size() * 4, blocks = (data + 2879) / 2880 * 2880;
  EXPECT_EQ(std::filesystem::file_size(dir.file("raw.fits")), std::filesystem::file_size(dir.file("old.fits")));
  EXPECT_EQ(std::filesystem::file_size(dir.file("raw.fits")) % 2880, 0u);
  EXPECT_GE(std::filesystem::file_size(dir.file("raw.fits")), blocks + 2880);
  EXPECT_TRUE(gio::fits_file_complete(dir.file("raw.fits")));
  std::vector<std::uint32_t> want;
  for (float x : v) want.push_back(bits(x));
  EXPECT_EQ(cfitsio_bits(dir.file("raw.fits"), v.size()), want);
  // The same cards as CFITSIO's writer, but for the times.
  auto cards = [](const std::string& path) {
    std::vector<std::string> out;
    const gio::FitsImage img = gio::read_fits_header(path);
    for (const auto& c : img.header.cards())
      if (c.rfind("DATE", 0) != 0 && c.rfind("CHECKSUM", 0) != 0 && c.rfind("DATASUM", 0) != 0) out.push_back(c);
    return out;
  };
  EXPECT_EQ(cards(dir.file("raw.fits")), cards(dir.file("old.fits")));
  EXPECT_EQ(gio::read_fits_header(dir.file("raw.fits")).header.get_string("DATASUM"),
            gio::read_fits_header(dir.file("old.fits")).header.get_string("DATASUM"));
  // The fill after the data is zeros.
  std::ifstream in(dir.file("raw.fits"), std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file.find_first_not_of('\0', file.size() - (blocks - data)), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Sizes, FitsRawWrite,
                         ::testing::Values(std::make_pair(1000L, 700L), std::make_pair(72L, 40L),
                                           std::make_pair(1100L, 1000L), std::make_pair(1L, 1L)));

TEST(FitsRaw, CubeWithABeamsTableIsAppendedAndSummed) {
  TempDir dir;
  gio::FitsCube layout;
  layout.width = 16;
  layout.height = 8;
  layout.channels = 3;
  std::vector<float> v(16 * 8 * 3);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f;
  const std::vector<gio::CubeBeam> beams = {{1e-3, 5e-4, 10}, {2e-3, 6e-4, 20}, {3e-3, 7e-4, 30}};
  gio::write_fits_cube(dir.file("c.fits"), layout, v.data(), freq_header(), beams, {});
  EXPECT_EQ(verify_checksums(dir.file("c.fits"), 1), std::make_pair(1, 1));
  EXPECT_EQ(verify_checksums(dir.file("c.fits"), 2), std::make_pair(1, 1));
  const gio::FitsCube back = gio::read_fits_cube(dir.file("c.fits"));
  ASSERT_EQ(back.beams.size(), 3u);
  EXPECT_NEAR(back.beams[2].bmaj_deg, 3e-3, 1e-9);
  EXPECT_EQ(back.pixels, v);
}

TEST(FitsRaw, ThreadsReadAndWriteAsOneThreadDoes) {
  TempDir dir;
  constexpr int kFiles = 8;
  std::vector<std::vector<float>> planes(kFiles, std::vector<float>(96 * 64));
  for (int p = 0; p < kFiles; ++p)
    for (std::size_t i = 0; i < planes[p].size(); ++i) planes[p][i] = static_cast<float>(p * 1000 + i % 100) - 3.0f;
  gio::WriteOptions o;
  o.overwrite = true;
  {
    gio::StagedOutputs staged(true);
    std::vector<std::string> names;
    for (int p = 0; p < kFiles; ++p) names.push_back(staged.stage(dir.file("p" + std::to_string(p) + ".fits")));
    for (const auto& n : names) EXPECT_TRUE(gio::durable_at_commit(n));
    std::vector<std::thread> writers;
    for (int p = 0; p < kFiles; ++p)
      writers.emplace_back([&, p] { gio::write_fits_image(names[p], planes[p].data(), 96, 64, {}, {96, 64}, o); });
    for (auto& t : writers) t.join();
    staged.commit();
    for (const auto& n : names) EXPECT_FALSE(gio::durable_at_commit(n));
  }
  // A cube of the planes, read serially, then by four threads at once, three times each.
  gio::FitsCube layout;
  layout.width = 96;
  layout.height = 64;
  layout.channels = kFiles;
  std::vector<float> all;
  for (const auto& p : planes) all.insert(all.end(), p.begin(), p.end());
  // Doubles go through a per-thread chunk buffer: a file of several chunks, read at once.
  std::vector<double> doubles(512 * 1024);
  for (std::size_t i = 0; i < doubles.size(); ++i) doubles[i] = static_cast<double>(i) * 0.25;
  write_plain(dir.file("cube64.fits"), DOUBLE_IMG, 512, 1024, doubles);
  gio::write_fits_cube(dir.file("cube.fits"), layout, all.data(), freq_header(), {}, {});
  const gio::FitsCube serial = gio::read_fits_cube(dir.file("cube.fits"));
  const gio::FitsImage serial64 = gio::read_fits_image(dir.file("cube64.fits"));
  ASSERT_EQ(serial.pixels, all);
  std::vector<int> bad(4, 0);
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      for (int r = 0; r < 3; ++r) {
        bad[t] += gio::read_fits_cube(dir.file("cube.fits")).pixels != serial.pixels;
        bad[t] += gio::read_fits_image(dir.file("cube64.fits")).pixels != serial64.pixels;
        for (int p = 0; p < kFiles; ++p)
          bad[t] += gio::read_fits_image(dir.file("p" + std::to_string(p) + ".fits")).pixels != planes[p];
      }
    });
  for (auto& th : readers) th.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
}

TEST(FitsRaw, AFailedStagedOutputLeavesNone) {
  TempDir dir;
  std::vector<float> v(32 * 32, 1.0f);
  ::setenv("GPUCLEAN_TEST_FAIL_OUTPUT", "c.fits", 1);
  std::vector<std::string> names;
  try {
    gio::StagedOutputs staged(false);
    gio::WriteOptions o;
    o.overwrite = true;
    for (const char* n : {"a.fits", "b.fits", "c.fits"}) {
      names.push_back(staged.stage(dir.file(n)));
      gio::write_fits_image(names.back(), v.data(), 32, 32, {}, {32, 32}, o);
    }
    staged.commit();
    ADD_FAILURE() << "staging c.fits should have failed";
  } catch (const gio::FitsError&) {
  }
  ::unsetenv("GPUCLEAN_TEST_FAIL_OUTPUT");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  for (const auto& n : names) EXPECT_FALSE(gio::durable_at_commit(n));
}

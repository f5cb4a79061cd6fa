// Cubes: a CASA-style cube (STOKES before FREQ, a BEAMS table) written with CFITSIO directly is
// read plane by plane with its frequencies, Stokes codes and beams; gpuclean's cubes read back
// with their order, cards and beams (a common beam as BMAJ, different ones as a BEAMS table);
// mismatched dirty/PSF cubes and unknown axes are refused with one line naming what differs.
#include <gtest/gtest.h>
#include <fitsio.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/fits_cube.hpp"
#include "io/fits_error.hpp"
#include "io/fits_reader.hpp"
#include "tests/support/temp_dir.hpp"

namespace gio = gpuclean::io;
using gpuclean::test::TempDir;

namespace {

constexpr long kW = 4, kH = 3;

// Pixel i of plane (c, s): 100 c + 10 s + i, so a misplaced plane shows.
float value(std::size_t c, std::size_t s, std::size_t i) { return static_cast<float>(100 * c + 10 * s + i); }

void check(int status) {
  if (status) {
    char text[FLEN_STATUS];
    fits_get_errstatus(status, text);
    throw std::runtime_error(std::string("test file: ") + text);
  }
}

// CASA's layout: axis 3 STOKES (I and V: codes 1, 4 with CDELT 3), axis 4 FREQ (3 channels around
// 1 GHz, CRPIX 2), and a BEAMS table whose BMAJ grows with the channel (arcsec).
void write_casa_cube(const std::string& path, bool with_beams) {
  int status = 0;
  fitsfile* f = nullptr;
  fits_create_diskfile(&f, path.c_str(), &status);
  long axes[4] = {kW, kH, 2, 3};
  fits_create_img(f, FLOAT_IMG, 4, axes, &status);
  const auto str = [&](const char* k, const char* v) { fits_write_key_str(f, k, v, "", &status); };
  const auto dbl = [&](const char* k, double v) { fits_write_key_dbl(f, k, v, -15, "", &status); };
  str("CTYPE1", "RA---SIN");
  str("CTYPE2", "DEC--SIN");
  dbl("CDELT1", -1e-3);
  dbl("CDELT2", 1e-3);
  str("CTYPE3", "STOKES");
  dbl("CRVAL3", 1.0);
  dbl("CDELT3", 3.0);
  dbl("CRPIX3", 1.0);
  str("CTYPE4", "FREQ");
  dbl("CRVAL4", 1.0e9);
  dbl("CDELT4", 1.0e6);
  dbl("CRPIX4", 2.0);
  str("TELESCOP", "TESTSCOPE");
  if (with_beams) fits_write_key_log(f, "CASAMBM", 1, "", &status);
  std::vector<float> data;
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t i = 0; i < kW * kH; ++i) data.push_back(value(c, s, i));
  fits_write_img(f, TFLOAT, 1, static_cast<LONGLONG>(data.size()), data.data(), &status);
  if (with_beams) {
    char* names[] = {const_cast<char*>("BMAJ"), const_cast<char*>("BMIN"), const_cast<char*>("BPA"),
                     const_cast<char*>("CHAN"), const_cast<char*>("POL")};
    char* forms[] = {const_cast<char*>("1E"), const_cast<char*>("1E"), const_cast<char*>("1E"),
                     const_cast<char*>("1J"), const_cast<char*>("1J")};
    char* units[] = {const_cast<char*>("arcsec"), const_cast<char*>("arcsec"), const_cast<char*>("deg"),
                     const_cast<char*>(""), const_cast<char*>("")};
    fits_create_tbl(f, BINARY_TBL, 6, 5, names, forms, units, "BEAMS", &status);
    int row = 1;
    for (int c = 2; c >= 0; --c) {  // rows in any order
      for (int s = 0; s < 2; ++s, ++row) {
        float maj = 10.0f + c, min = 5.0f + s, pa = 30.0f;
        fits_write_col(f, TFLOAT, 1, row, 1, 1, &maj, &status);
        fits_write_col(f, TFLOAT, 2, row, 1, 1, &min, &status);
        fits_write_col(f, TFLOAT, 3, row, 1, 1, &pa, &status);
        fits_write_col(f, TINT, 4, row, 1, 1, &c, &status);
        fits_write_col(f, TINT, 5, row, 1, 1, &s, &status);
      }
    }
  }
  fits_close_file(f, &status);
  check(status);
}

// A FREQ-first cube in gpuclean's writer (WSClean's order) of `channels` planes.
gio::FitsCube freq_first(std::size_t channels) {
  gio::FitsCube c;
  c.width = kW;
  c.height = kH;
  c.channels = channels;
  c.stokes = 1;
  c.axes = {kW, kH, static_cast<long>(channels), 1};
  c.header.set_string("CTYPE1", "RA---SIN");
  c.header.set_string("CTYPE2", "DEC--SIN");
  c.header.set_double("CDELT1", -1e-3);
  c.header.set_double("CDELT2", 1e-3);
  c.header.set_string("CTYPE3", "FREQ");
  c.header.set_double("CRPIX3", 1.0);
  c.header.set_double("CRVAL3", 1.4e9);
  c.header.set_double("CDELT3", 2e6);
  c.header.set_string("CTYPE4", "STOKES");
  c.header.set_double("CRVAL4", 1.0);
  c.header.set_string("OBSERVER", "test");
  for (std::size_t ch = 0; ch < channels; ++ch)
    for (std::size_t i = 0; i < kW * kH; ++i) c.pixels.push_back(value(ch, 0, i));
  return c;
}

}  // namespace

TEST(FitsCube, ReadsACasaCubeWithStokesFirstAndABeamsTable) {
  TempDir dir;
  write_casa_cube(dir.file("casa.fits"), true);
  const gio::FitsCube cube = gio::read_fits_cube(dir.file("casa.fits"));
  EXPECT_EQ(cube.channels, 3u);
  EXPECT_EQ(cube.stokes, 2u);
  EXPECT_EQ(cube.order[0], gio::CubeAxis::kStokes);
  EXPECT_EQ(cube.stokes_axis, 3);
  EXPECT_EQ(cube.freq_axis, 4);
  EXPECT_EQ(cube.stokes_codes, (std::vector<int>{1, 4}));
  ASSERT_EQ(cube.frequencies_hz.size(), 3u);
  EXPECT_DOUBLE_EQ(cube.frequencies_hz[0], 0.999e9);
  EXPECT_DOUBLE_EQ(cube.frequencies_hz[2], 1.001e9);
  EXPECT_DOUBLE_EQ(cube.channel_widths_hz[1], 1e6);
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t s = 0; s < 2; ++s) {
      EXPECT_EQ(cube.plane(c, s)[5], value(c, s, 5)) << c << "," << s;
      const gio::CubeBeam& b = cube.beams[cube.beam_index(c, s)];
      EXPECT_NEAR(b.bmaj_deg * 3600.0, 10.0 + c, 1e-4);
      EXPECT_NEAR(b.bmin_deg * 3600.0, 5.0 + s, 1e-4);
      EXPECT_NEAR(b.bpa_deg, 30.0, 1e-5);
    }

  const gio::FitsImage plane = gio::cube_plane(cube, 2, 1);
  EXPECT_EQ(plane.pixels[7], value(2, 1, 7));
  EXPECT_EQ(plane.axes, (std::vector<long>{kW, kH, 1, 1}));
  EXPECT_DOUBLE_EQ(*plane.header.get_double("CRVAL4"), 1.001e9);
  EXPECT_DOUBLE_EQ(*plane.header.get_double("CRVAL3"), 4.0);
  EXPECT_NEAR(*plane.header.get_double("BMAJ") * 3600.0, 12.0, 1e-4);
  EXPECT_FALSE(plane.header.has("CASAMBM"));
}

TEST(FitsCube, ShapeOnlyAndPlainImagesAreOnePlane) {
  TempDir dir;
  write_casa_cube(dir.file("casa.fits"), false);
  const gio::FitsCube shape = gio::read_fits_cube_shape(dir.file("casa.fits"));
  EXPECT_EQ(shape.planes(), 6u);
  EXPECT_TRUE(shape.pixels.empty());
  EXPECT_TRUE(shape.beams.empty());

  gio::FitsCube one = freq_first(1);
  gio::write_fits_cube(dir.file("one.fits"), one, one.pixels.data(), one.header, {}, {});
  const gio::FitsCube back = gio::read_fits_cube_shape(dir.file("one.fits"));
  EXPECT_EQ(back.planes(), 1u);
  EXPECT_NO_THROW(gio::read_fits_image(dir.file("one.fits")));
  // The plane reader refuses a cube and says how to clean one.
  try {
    gio::read_fits_image(dir.file("casa.fits"));
    FAIL() << "a cube was read as a plane";
  } catch (const gio::FitsError& e) {
    EXPECT_NE(std::string(e.what()).find("as a cube"), std::string::npos) << e.what();
  }
}

TEST(FitsCube, WritesACommonBeamAsKeywordsAndDifferentBeamsAsACasaTable) {
  TempDir dir;
  gio::FitsCube cube = freq_first(3);
  const std::vector<gio::CubeBeam> same(3, gio::CubeBeam{2e-3, 1e-3, 45.0});
  gio::write_fits_cube(dir.file("same.fits"), cube, cube.pixels.data(), cube.header, same, {});
  const gio::FitsCube a = gio::read_fits_cube(dir.file("same.fits"));
  EXPECT_TRUE(a.beams.empty());
  EXPECT_DOUBLE_EQ(*a.header.get_double("BMAJ"), 2e-3);
  EXPECT_EQ(a.header.get_string("OBSERVER"), "test");
  EXPECT_EQ(a.order[0], gio::CubeAxis::kFreq);
  EXPECT_EQ(a.pixels, cube.pixels);

  std::vector<gio::CubeBeam> differ = same;
  differ[2].bmaj_deg = 3e-3;
  gio::write_fits_cube(dir.file("differ.fits"), cube, cube.pixels.data(), a.header, differ, {});
  const gio::FitsCube b = gio::read_fits_cube(dir.file("differ.fits"));
  EXPECT_FALSE(b.header.has("BMAJ"));
  EXPECT_TRUE(b.header.has("CASAMBM"));
  ASSERT_EQ(b.beams.size(), 3u);
  EXPECT_NEAR(b.beams[2].bmaj_deg, 3e-3, 1e-9);
  EXPECT_NEAR(b.beams[0].bmaj_deg, 2e-3, 1e-9);
  EXPECT_NEAR(b.beams[1].bpa_deg, 45.0, 1e-5);
  // Written back with a common beam, the stale CASAMBM card goes.
  gio::write_fits_cube(dir.file("again.fits"), b, b.pixels.data(), b.header, same, {});
  EXPECT_FALSE(gio::read_fits_cube(dir.file("again.fits")).header.has("CASAMBM"));
}

TEST(FitsCube, RefusesMismatchedCubesNamingWhatDiffers) {
  const gio::FitsCube dirty = freq_first(3);
  const auto message = [&](const gio::FitsCube& psf) {
    try {
      gio::check_cubes_match(dirty, "d.fits", psf, "p.fits");
    } catch (const gio::FitsError& e) {
      EXPECT_EQ(e.kind(), gio::FitsError::Kind::kInput);
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(dirty), "");
  EXPECT_NE(message(freq_first(4)).find("3 channels against 4"), std::string::npos);
  gio::FitsCube shifted = dirty;
  shifted.frequencies_hz = {1.4e9, 1.402e9, 1.5e9};
  gio::FitsCube base = dirty;
  base.frequencies_hz = {1.4e9, 1.402e9, 1.404e9};
  EXPECT_NE(([&] {
              try {
                gio::check_cubes_match(base, "d.fits", shifted, "p.fits");
              } catch (const gio::FitsError& e) {
                return std::string(e.what());
              }
              return std::string();
            })()
                .find("channel 2"),
            std::string::npos);
  gio::FitsCube other = dirty;
  other.stokes_codes = {4};
  other.header.set_double("CDELT1", -2e-3);
  EXPECT_NE(message(other).find("Stokes"), std::string::npos);
  other.stokes_codes = dirty.stokes_codes;
  EXPECT_NE(message(other).find("CDELT1"), std::string::npos);
}

TEST(FitsCube, RefusesAnAxisThatIsNeitherFrequencyNorStokes) {
  TempDir dir;
  gio::FitsCube cube = freq_first(3);
  cube.header.set_string("CTYPE3", "TIME");
  gio::write_fits_cube(dir.file("time.fits"), cube, cube.pixels.data(), cube.header, {}, {});
  try {
    gio::read_fits_cube(dir.file("time.fits"));
    FAIL() << "a TIME axis was read as channels";
  } catch (const gio::FitsError& e) {
    EXPECT_NE(std::string(e.what()).find("'TIME'"), std::string::npos) << e.what();
  }
  // A velocity axis carries channels without frequencies.
  cube.header.set_string("CTYPE3", "VRAD");
  gio::write_fits_cube(dir.file("vrad.fits"), cube, cube.pixels.data(), cube.header, {}, {});
  const gio::FitsCube v = gio::read_fits_cube(dir.file("vrad.fits"));
  EXPECT_EQ(v.channels, 3u);
  EXPECT_TRUE(v.frequencies_hz.empty());
}

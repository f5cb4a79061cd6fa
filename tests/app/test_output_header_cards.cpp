// A one-image run's outputs keep their header byte for byte: every card of the restored image,
// the residual and the model (the structural ones included: NAXIS and the degenerate axes) as
// gpuclean wrote them before reading and writing went through the cube code (a 2-D image is a
// one-plane cube). Cards whose values the run computes or the clock sets are compared by
// keyword only: a reference card ending in '*' matches any card that starts as it does.
#include <fitsio.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "io/fits_reader.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/simulated_pair.hpp"

namespace {

using HeaderCards = gpuclean::test::SimulatedPairTest;
using Cards = std::vector<std::string>;

// Every card of the primary HDU, END excluded.
Cards read_cards(const std::string& path) {
  fitsfile* f = nullptr;
  int status = 0, n = 0;
  fits_open_diskfile(&f, path.c_str(), READONLY, &status);
  fits_get_hdrspace(f, &n, nullptr, &status);
  Cards cards;
  char card[FLEN_CARD];
  for (int i = 1; i <= n; ++i) {
    fits_read_record(f, i, card, &status);
    cards.emplace_back(card);
  }
  fits_close_file(f, &status);
  EXPECT_EQ(status, 0) << path;
  return cards;
}

// Writes `pixels` as a float image of `axes` with `cards` after the structural ones.
void write_input(const std::string& path, const std::vector<float>& pixels, std::vector<long> axes,
                 const Cards& cards) {
  fitsfile* f = nullptr;
  int status = 0;
  fits_create_diskfile(&f, path.c_str(), &status);
  fits_create_img(f, FLOAT_IMG, static_cast<int>(axes.size()), axes.data(), &status);
  for (const std::string& c : cards) fits_write_record(f, c.c_str(), &status);
  fits_write_img(f, TFLOAT, 1, static_cast<LONGLONG>(pixels.size()), const_cast<float*>(pixels.data()), &status);
  fits_close_file(f, &status);
  ASSERT_EQ(status, 0) << path;
}

void expect_cards(const std::string& path, const Cards& expected) {
  const Cards got = read_cards(path);
  if (std::getenv("GPUCLEAN_PRINT_HEADER_CARDS")) {
    std::printf("%s\n", path.c_str());
    for (const std::string& c : got) std::printf("      \"%s\",\n", c.c_str());
  }
  EXPECT_EQ(got.size(), expected.size()) << path;
  for (std::size_t i = 0; i < std::max(got.size(), expected.size()); ++i) {
    const std::string g = i < got.size() ? got[i] : "(none)", e = i < expected.size() ? expected[i] : "(none)";
    if (e.back() == '*')
      EXPECT_EQ(g.substr(0, e.size() - 1), e.substr(0, e.size() - 1)) << path << " card " << i;
    else
      EXPECT_EQ(g, e) << path << " card " << i;
  }
}

// The cards gpuclean adds after the input's: units, beam (not on the model), provenance, the
// command line and summary as HISTORY, date and checksums.
Cards gpuclean_cards(bool model) {
  Cards c;
  if (model) {
    c.push_back("BUNIT   = 'JY/PIXEL'           / Units of flux");
  } else {
    c.insert(c.end(), {"BUNIT   = 'JY/BEAM '           / Units of flux",
                       "BMAJ    =     0.00833333333333 / [deg] restoring beam major axis (FWHM)",
                       "BMIN    =     0.00555555555556 / [deg] restoring beam minor axis (FWHM)",
                       "BPA     =                  20. / [deg] restoring beam position angle"});
  }
  c.insert(c.end(), {"ORIGIN  = *", "GCVERSIO= *",
                     "GCALGO  = 'clark   '           / CLEAN algorithm",
                     "GCDEVICE= 'cpu     '           / device that ran CLEAN",
                     "GCNITER =                   40 / maximum number of components",
                     "GCITER  =                   40 / components cleaned",
                     "GCMAJOR =                    1 / major cycles",
                     "GCGAIN  =                  0.1 / loop gain",
                     "GCMGAIN =                   1. / major-cycle gain",
                     "GCTHRESH=                   0. / absolute threshold",
                     "GCATHRES=                   0. / auto-threshold [sigma]",
                     "GCAMASK =                   0. / auto-mask [sigma], 0 = off",
                     "GCFTHRES=                   0. / threshold in force at the end",
                     "GCNEGCM =                    T / negative components allowed",
                     "GCSTOP  = 'niter   '           / why CLEAN stopped",
                     "HISTORY gpuclean in.fits psf.fits -o img.fits --residual res.fits --model mode",
                     "HISTORY l.fits --device cpu --niter 40 --auto-threshold 0 --beam-shape 30 20 2",
                     "HISTORY 0 -q",
                     "HISTORY gpuclean *",
                     "DATE    = *", "CHECKSUM= *", "DATASUM = *"});
  return c;
}

// The cards CFITSIO writes first for a float image of `axes`.
Cards structural_cards(const std::vector<long>& axes) {
  Cards c = {"SIMPLE  =                    T / file does conform to FITS standard",
             "BITPIX  =                  -32 / number of bits per data pixel"};
  char card[128];
  std::snprintf(card, sizeof card, "NAXIS   = %20zu / number of data axes", axes.size());
  c.emplace_back(card);
  for (std::size_t a = 0; a < axes.size(); ++a) {
    std::snprintf(card, sizeof card, "NAXIS%-3zu= %20ld / length of data axis %zu", a + 1, axes[a], a + 1);
    c.emplace_back(card);
  }
  c.emplace_back("EXTEND  =                    T / FITS dataset may contain extensions");
  return c;
}

// The celestial cards every input carries, as WSClean writes them.
const Cards kCelestial = {
    "CTYPE1  = 'RA---SIN'           / Right ascension angle cosine",
    "CRPIX1  =                  65. / reference pixel",
    "CRVAL1  =    201.3650630833333 / reference value",
    "CDELT1  = -0.000277777777777778",
    "CUNIT1  = 'deg     '",
    "CTYPE2  = 'DEC--SIN'           / Declination angle cosine",
    "CRPIX2  =                  65.",
    "CRVAL2  =   -43.01911111111111",
    "CDELT2  = 0.000277777777777778",
    "CUNIT2  = 'deg     '",
};
// Observation cards, and the ones gpuclean replaces (BUNIT, BMAJ, DATE) or keeps (HISTORY).
const Cards kObservation = {
    "SPECSYS = 'TOPOCENT'",
    "BUNIT   = 'JY/BEAM '           / Units are in Jansky per beam",
    "BMAJ    =  0.00277777777777778",
    "EQUINOX =                2000. / J2000",
    "DATE-OBS= '2024-03-05T01:02:03.0'",
    "TELESCOP= 'MeerKAT '",
    "OBSERVER= 'gpuclean test'",
    "DATE    = '2024-03-06T00:00:00'",
    "WSCIMGWG=      12345.678901234 / Weight of all imaging weights",
    "COMMENT  a comment the outputs keep",
    "HISTORY  a history line the outputs keep",
};

// Input cards in the order the outputs keep them: every one but BUNIT, BMAJ and DATE.
Cards kept(const Cards& input) {
  Cards out;
  for (const std::string& c : input)
    if (c.rfind("BUNIT", 0) != 0 && c.rfind("BMAJ", 0) != 0 && c.rfind("DATE    =", 0) != 0) out.push_back(c);
  return out;
}

// Writes the simulated dirty image in `tmp` as in.fits of `axes` with the celestial cards,
// `axis_cards` and the observation's, cleans it with the simulated PSF, and checks every card
// of the outputs. Relative names keep the command line in the HISTORY cards independent of the
// temporary folder's.
void check_outputs(const gpuclean::test::TempDir& tmp, const std::string& dirty, const std::string& psf,
                   const std::vector<long>& axes, const Cards& axis_cards) {
  Cards input = kCelestial;
  input.insert(input.end(), axis_cards.begin(), axis_cards.end());
  input.insert(input.end(), kObservation.begin(), kObservation.end());
  write_input(tmp.file("in.fits"), gpuclean::io::read_fits_image(dirty).pixels, axes, input);
  std::filesystem::copy_file(psf, tmp.file("psf.fits"));
  const auto r = gpuclean::test::run_command(
      tmp, "cd " + tmp.path().string() + " && " + gpuclean::test::binary_path() +
               " in.fits psf.fits -o img.fits --residual res.fits --model model.fits --device cpu --niter 40 "
               "--auto-threshold 0 --beam-shape 30 20 20 -q");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"img.fits", "res.fits", "model.fits"}) {
    Cards expected = structural_cards(axes);
    // CFITSIO's reference to the standard, then the input's cards.
    expected.insert(expected.end(),
                    {"COMMENT   FITS (Flexible Image Transport System) format is defined in 'Astronomy",
                     "COMMENT   and Astrophysics', volume 376, page 359; bibcode: 2001A&A...376..359H"});
    const Cards input_kept = kept(input);
    expected.insert(expected.end(), input_kept.begin(), input_kept.end());
    const Cards added = gpuclean_cards(std::string(name) == "model.fits");
    expected.insert(expected.end(), added.begin(), added.end());
    expect_cards(tmp.file(name), expected);
  }
}

}  // namespace

TEST_F(HeaderCards, TwoAxisImage) { check_outputs(tmp_, dirty(), psf(), {128, 128}, {}); }

// WSClean's layout: FREQ then STOKES, both of length 1, the FREQ axis's reference pixel not 1.
TEST_F(HeaderCards, FourAxisImageWithDegenerateFreqAndStokes) {
  check_outputs(tmp_, dirty(), psf(), {128, 128, 1, 1},
                {"CTYPE3  = 'FREQ    '", "CRPIX3  =                   2.", "CRVAL3  =          1.400000E+09",
                 "CDELT3  =              2.5E+07", "CUNIT3  = 'Hz      '", "CTYPE4  = 'STOKES  '",
                 "CRPIX4  =                   1.", "CRVAL4  =                   1.", "CDELT4  =                   1.",
                 "CUNIT4  = '        '"});
}

// Three axes, the third a Stokes axis of length 1.
TEST_F(HeaderCards, ThreeAxisImageWithDegenerateStokes) {
  check_outputs(tmp_, dirty(), psf(), {128, 128, 1},
                {"CTYPE3  = 'STOKES  '", "CRPIX3  =                   1.", "CRVAL3  =                   1.",
                 "CDELT3  =                   1."});
}

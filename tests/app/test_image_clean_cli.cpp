// `gpuclean image -niter N` end to end on the CPU (the binary on a small simulated MS, no noise):
// the five files are written, CLEAN takes the residual well below the dirty image's peak, and the
// model's total flux is the simulation's truth (data/simulate_ms.py's CSV) within 10 %.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean {
namespace {

using test::TempDir;

std::string make_ms(const TempDir& dir) {  // test_image_cli's MS: 10 points, 10 mJy..1 Jy within 6'
  const std::string ms = dir.file("a.ms");
  test::run_python(dir, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                            " --sky points --antennas 16 --hours 2 --integration 600 --channels 2 --noise 0");
  return ms;
}

/// Σ_sources S_ref · (f / f_ref)^α from the truth CSV.
double truth_flux(const std::string& csv, double freq_hz) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  for (std::stringstream h(line); std::getline(h, line, ',');) names.push_back(line);
  const auto column = [&](const char* n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  const auto flux = column("flux_jy"), alpha = column("spectral_index"), ref = column("ref_freq_hz");
  double total = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> v;
    for (std::stringstream r(line); std::getline(r, line, ',');) v.push_back(line);
    total += std::stod(v.at(flux)) * std::pow(freq_hz / std::stod(v.at(ref)), std::stod(v.at(alpha)));
  }
  return total;
}

double peak(const io::FitsImage& f) {
  double p = 0;
  for (float v : f.pixels) p = std::max(p, std::abs(double{v}));
  return p;
}

TEST(ImageCleanCli, CleansToTheTruth) {
  TempDir dir;
  const std::string ms = make_ms(dir);
  const test::CommandResult r = test::run_gpuclean(
      dir, "image -j 2 -niter 200 -mgain 0.8 -threshold 5mJy -make-psf -device cpu -size 256 256 -scale 4asec -name " +
               dir.file("g") + " " + ms);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("major cycle 1:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("major cycle 2:"), std::string::npos) << r.out;  // -mgain 0.8: more than one
  for (const char* kind : {"dirty", "psf", "residual", "model", "image"})
    ASSERT_TRUE(std::filesystem::exists(dir.file(std::string("g-") + kind + ".fits"))) << kind;
  const io::FitsImage dirty = io::read_fits_image(dir.file("g-dirty.fits"));
  const io::FitsImage residual = io::read_fits_image(dir.file("g-residual.fits"));
  const io::FitsImage model = io::read_fits_image(dir.file("g-model.fits"));
  const io::FitsImage image = io::read_fits_image(dir.file("g-image.fits"));
  std::printf("peaks: dirty %.4f residual %.4f image %.4f Jy/beam\n", peak(dirty), peak(residual), peak(image));
  EXPECT_LT(peak(residual), 0.1 * peak(dirty));
  // The restored image holds the sources again (model ⊛ beam + residual).
  EXPECT_NEAR(peak(image), peak(dirty), 0.1 * peak(dirty));

  // The truth averaged over the MS's two channels (CRVAL3 ± CDELT3 / 4).
  const double centre = *dirty.header.get_double("CRVAL3"), width = *dirty.header.get_double("CDELT3");
  const std::string csv = dir.file("a-truth.csv");
  const double truth = (truth_flux(csv, centre - width / 4) + truth_flux(csv, centre + width / 4)) / 2;
  double total = 0;
  for (float v : model.pixels) total += v;
  std::printf("model %.4f Jy, truth %.4f Jy\n", total, truth);
  EXPECT_NEAR(total, truth, 0.1 * truth);
}

// -beam-shape restores with the given beam and every file carries it (WSClean 3.1 DetermineBeamSize):
// Σ(image − residual) = Σ model × the beam's area in pixels, π/(4 ln 2)·BMAJ·BMIN / scale².
TEST(ImageCleanCli, GivenBeamRestoresAndIsWritten) {
  TempDir dir;
  const std::string ms = make_ms(dir);
  const test::CommandResult r = test::run_gpuclean(
      dir, "image -j 2 -niter 100 -threshold 20mJy -device cpu -size 256 256 -scale 4asec "
           "-beam-shape 30asec 20asec 45deg -name " + dir.file("b") + " " + ms);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* kind : {"dirty", "psf", "residual", "model", "image"}) {
    const io::FitsImage f = io::read_fits_image(dir.file(std::string("b-") + kind + ".fits"));
    EXPECT_NEAR(*f.header.get_double("BMAJ"), 30.0 / 3600, 1e-9) << kind;
    EXPECT_NEAR(*f.header.get_double("BMIN"), 20.0 / 3600, 1e-9) << kind;
    EXPECT_NEAR(*f.header.get_double("BPA"), 45.0, 1e-9) << kind;
  }
  const io::FitsImage model = io::read_fits_image(dir.file("b-model.fits"));
  const io::FitsImage residual = io::read_fits_image(dir.file("b-residual.fits"));
  const io::FitsImage image = io::read_fits_image(dir.file("b-image.fits"));
  double flux = 0, restored = 0;
  for (float v : model.pixels) flux += v;
  for (std::size_t i = 0; i < image.pixels.size(); ++i) restored += double{image.pixels[i]} - residual.pixels[i];
  const double area = M_PI / (4 * std::log(2.0)) * 30 * 20 / (4 * 4);  // pixels
  ASSERT_GT(flux, 0.5);
  EXPECT_NEAR(restored / area, flux, 0.01 * flux);  // a little of the beam falls off the image's edge
}

// -fits-mask: components only where the mask is non-zero (as WSClean 3.1): a box around the
// brightest pixel of the dirty image keeps every component inside it, and the others' residual.
TEST(ImageCleanCli, FitsMaskKeepsComponentsInside) {
  TempDir dir;
  const std::string ms = make_ms(dir);
  const std::string common = "image -j 2 -mgain 0.8 -threshold 5mJy -device cpu -size 256 256 -scale 4asec ";
  test::CommandResult r = test::run_gpuclean(dir, common + "-niter 0 -name " + dir.file("d") + " " + ms);
  ASSERT_EQ(r.code, 0) << r.err;
  const io::FitsImage dirty = io::read_fits_image(dir.file("d-dirty.fits"));
  const std::size_t peak_at =
      std::max_element(dirty.pixels.begin(), dirty.pixels.end()) - dirty.pixels.begin();
  const long px = static_cast<long>(peak_at % 256), py = static_cast<long>(peak_at / 256);
  std::vector<float> mask(256 * 256, 0.0f);
  for (long y = py - 8; y <= py + 8; ++y)
    for (long x = px - 8; x <= px + 8; ++x)
      if (x >= 0 && y >= 0 && x < 256 && y < 256) mask[static_cast<std::size_t>(y * 256 + x)] = 1.0f;
  io::write_fits_image(dir.file("mask.fits"), mask.data(), 256, 256, io::FitsHeader{}, {256, 256, 1, 1},
                       io::WriteOptions{});
  r = test::run_gpuclean(dir, common + "-niter 200 -fits-mask " + dir.file("mask.fits") + " -name " + dir.file("m") +
                                  " " + ms);
  ASSERT_EQ(r.code, 0) << r.err;
  const io::FitsImage model = io::read_fits_image(dir.file("m-model.fits"));
  std::size_t inside = 0, outside = 0;
  for (std::size_t i = 0; i < model.pixels.size(); ++i)
    if (model.pixels[i] != 0) (mask[i] != 0 ? inside : outside) += 1;
  std::printf("components' pixels: %zu inside the mask, %zu outside\n", inside, outside);
  EXPECT_GT(inside, 0u);
  EXPECT_EQ(outside, 0u);
}

}  // namespace
}  // namespace gpuclean

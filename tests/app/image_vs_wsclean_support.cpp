#include "tests/app/image_vs_wsclean_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/fits_reader.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean::test {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> v;
  std::string cell;
  for (std::stringstream s(line); std::getline(s, cell, ',');) v.push_back(cell);
  return v;
}

double header(const io::FitsImage& f, const char* key) {
  const auto v = f.header.get_double(key);
  if (!v) throw std::runtime_error(std::string("no ") + key + " in the FITS header");
  return *v;
}

}  // namespace

double TruthRow::flux_at(double f_hz) const { return flux_jy * std::pow(f_hz / ref_freq_hz, spectral_index); }

double TruthRow::mean_flux(const std::vector<double>& f_hz) const {
  double s = 0;
  for (double f : f_hz) s += flux_at(f);
  return s / static_cast<double>(f_hz.size());
}

std::vector<TruthRow> read_truth(const std::string& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> names = split(line);
  const auto col = [&](const char* n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  std::vector<TruthRow> out;
  while (std::getline(in, line)) {
    const std::vector<std::string> v = split(line);
    const auto at = [&](const char* n) { return std::stod(v.at(col(n))); };
    out.push_back({v.at(col("kind")), at("l_arcsec"), at("m_arcsec"), at("flux_jy"), at("ref_freq_hz"),
                   at("spectral_index"), at("fwhm_major_arcsec"), at("fwhm_minor_arcsec")});
  }
  if (out.empty()) throw std::runtime_error("no sources in " + csv);
  return out;
}

std::vector<Source> truth(const std::string& csv, double f_low, double f_high) {
  std::vector<Source> out;
  for (const TruthRow& r : read_truth(csv)) out.push_back({r.l_arcsec, r.m_arcsec, r.mean_flux({f_low, f_high})});
  return out;
}

std::vector<double> ms_channel_centres(const io::FitsImage& image, int per_image) {
  const double centre = header(image, "CRVAL3"), width = header(image, "CDELT3");
  std::vector<double> f;
  for (int k = 0; k < per_image; ++k) f.push_back(centre - width / 2 + (k + 0.5) * width / per_image);
  return f;
}

double rms(const io::FitsImage& f) {
  double s = 0;
  for (float v : f.pixels) s += double{v} * v;
  return std::sqrt(s / f.pixels.size());
}

double total(const io::FitsImage& f) {
  double s = 0;
  for (float v : f.pixels) s += v;
  return s;
}

void pixel_of(const io::FitsImage& f, double l_arcsec, double m_arcsec, double* x, double* y) {
  *x = header(f, "CRPIX1") - 1 + l_arcsec / (header(f, "CDELT1") * 3600);
  *y = header(f, "CRPIX2") - 1 + m_arcsec / (header(f, "CDELT2") * 3600);
}

void pixel_of(const io::FitsImage& f, const Source& s, double* x, double* y) {
  pixel_of(f, s.l_arcsec, s.m_arcsec, x, y);
}

double around(const io::FitsImage& f, double x, double y, double radius, bool max) {
  double r = max ? -1e30 : 0;
  for (std::size_t j = 0; j < f.height; ++j)
    for (std::size_t i = 0; i < f.width; ++i)
      if ((i - x) * (i - x) + (j - y) * (j - y) <= radius * radius) {
        const double v = f.pixels[j * f.width + i];
        r = max ? std::max(r, v) : r + v;
      }
  return r;
}

double box_sum(const io::FitsImage& f, double x, double y, int half) {
  const long cx = std::lround(x), cy = std::lround(y);
  double s = 0;
  for (long j = std::max(0L, cy - half); j <= std::min<long>(f.height - 1, cy + half); ++j)
    for (long i = std::max(0L, cx - half); i <= std::min<long>(f.width - 1, cx + half); ++i)
      s += f.pixels[j * f.width + i];
  return s;
}

double beam_area_pixels(const io::FitsImage& f) {
  const double pixel = std::abs(header(f, "CDELT1"));
  return M_PI / (4 * std::log(2.0)) * (header(f, "BMAJ") / pixel) * (header(f, "BMIN") / pixel);
}

double max_difference(const io::FitsImage& a, const io::FitsImage& b) {
  if (a.pixels.size() != b.pixels.size()) return INFINITY;
  double d = 0, peak = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    d = std::max(d, std::abs(double{a.pixels[i]} - b.pixels[i]));
    peak = std::max(peak, std::abs(double{b.pixels[i]}));
  }
  return d / peak;
}

Outputs read_outputs(const std::string& prefix) {
  Outputs o;
  o.dirty = io::read_fits_image(prefix + "-dirty.fits");
  o.psf = io::read_fits_image(prefix + "-psf.fits");
  o.residual = io::read_fits_image(prefix + "-residual.fits");
  o.model = io::read_fits_image(prefix + "-model.fits");
  o.image = io::read_fits_image(prefix + "-image.fits");
  return o;
}

std::string simulate(const TempDir& dir, const std::string& name, const std::string& options) {
  const std::string ms = dir.file(name + ".ms");
  run_python(dir, source_dir() + "/data/simulate_ms.py --out " + ms + " " + options);
  return ms;
}

void run_both(const TempDir& dir, const std::string& options, const std::string& ms) {
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  auto t0 = Clock::now();
  const CommandResult g = run_gpuclean(dir, "image " + options + " -device cpu -name " + dir.file("g") + " " + ms);
  const double tg = seconds(t0);
  if (g.code != 0) throw std::runtime_error("gpuclean image failed: " + g.err);
  std::printf("%s", g.out.c_str());
  t0 = Clock::now();
  const CommandResult w = run_command(dir, "wsclean " + options + " -name " + dir.file("w") + " " + ms);
  const double tw = seconds(t0);
  if (w.code != 0) throw std::runtime_error("wsclean failed: " + w.err);
  std::printf("wall time: gpuclean %.2f s, WSClean %.2f s\n", tg, tw);
}

void expect_point_recovered(const Source& s, const Outputs& run, double sigma, const std::string& who,
                            double radius) {
  double x, y;
  pixel_of(run.model, s, &x, &y);
  const double model = around(run.model, x, y, radius, false), left = around(run.residual, x, y, 0.75, true);
  std::printf("%-8s point at (%.0f, %.0f) px, %.4f Jy: model %.4f Jy + residual %.4f = %.4f Jy\n", who.c_str(), x,
              y, s.flux_jy, model, left, model + left);
  EXPECT_GT(model, 3 * sigma) << who << " at (" << x << ", " << y << ")";
  EXPECT_NEAR(model + left, s.flux_jy, 0.05 * s.flux_jy + 3 * sigma) << who << " at (" << x << ", " << y << ")";
}

}  // namespace gpuclean::test

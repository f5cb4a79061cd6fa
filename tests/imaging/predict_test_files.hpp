#pragma once
// What the -predict tests share: MSs made by tests/imaging/predict_fixture.py, its dump of
// MODEL_DATA, model images (points, one near the field's edge, a Gaussian blob) written as FITS
// with WSClean's WCS cards, and a direct Fourier transform in double.

#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "imaging/grid_plan.hpp"
#include "io/fits_header.hpp"
#include "io/fits_writer.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean::test {

/// A 168-row MS (8 antennas, 6 times, 3 channels 0.86–1.71 GHz, phase centre RA 53°, Dec −28°) with
/// `correlations` (xxyy, i, rrll or full), changed by ms_fixture.py edit's `edits`.
inline std::string make_predict_ms(const TempDir& dir, const std::string& name, const std::string& correlations,
                                   const std::string& edits = "") {
  const std::string ms = dir.file(name);
  run_python(dir, source_dir() + "/tests/imaging/predict_fixture.py make " + ms + " " + correlations);
  if (!edits.empty()) run_python(dir, source_dir() + "/tests/io/ms_fixture.py edit " + ms + " " + edits);
  return ms;
}

/// MODEL_DATA of every row as predict_fixture.py dump wrote it.
struct ModelData {
  std::size_t rows = 0, channels = 0, correlations = 0;
  bool present = false;
  std::vector<int> antenna1, antenna2, field, flag_row;
  std::vector<double> u, v, w;                 ///< metres
  std::vector<std::complex<float>> value;      ///< [row][channel][correlation]
  std::vector<int> flag;                       ///< the same layout
  std::complex<float> at(std::size_t r, std::size_t c, std::size_t k) const {
    return value[(r * channels + c) * correlations + k];
  }
};

inline ModelData dump_model_data(const TempDir& dir, const std::string& ms) {
  const std::string out = dir.file("model_data.txt");
  run_python(dir, source_dir() + "/tests/imaging/predict_fixture.py dump " + ms + " " + out);
  std::ifstream in(out);
  ModelData d;
  int present = 0;
  in >> d.rows >> d.channels >> d.correlations >> present;
  d.present = present != 0;
  for (std::size_t r = 0; r < d.rows; ++r) {
    int a1, a2, f, fr;
    double u, v, w;
    in >> a1 >> a2 >> f >> fr >> u >> v >> w;
    d.antenna1.push_back(a1), d.antenna2.push_back(a2), d.field.push_back(f), d.flag_row.push_back(fr);
    d.u.push_back(u), d.v.push_back(v), d.w.push_back(w);
    for (std::size_t i = 0; i < d.channels * d.correlations; ++i) {
      float re, im;
      int g;
      in >> re >> im >> g;
      d.value.emplace_back(re, im);
      d.flag.push_back(g);
    }
  }
  if (!in) throw std::runtime_error("cannot read " + out);
  return d;
}

/// A model in Jy/pixel, [y][x]: points at the centre, off centre and 2 pixels from a corner (the
/// field's edge), and a Gaussian blob (σ 2 pixels). `variant` 1 moves and scales them (a second
/// output channel's model must differ from the first's).
inline std::vector<double> test_model(std::size_t width, std::size_t height, int variant = 0) {
  std::vector<double> m(width * height, 0.0);
  const std::size_t s = static_cast<std::size_t>(variant) * 3;
  const double gain = variant == 0 ? 1.0 : 2.0;
  m[(height / 2) * width + width / 2] = 1.0 * gain;
  m[(height / 2 + 5) * width + width / 2 - 9 + s] = 0.5 * gain;
  m[(2 + s) * width + width - 3] = 0.3 * gain;  // near the corner: the w term and the kernel's edge
  for (std::size_t y = 0; y < height; ++y)
    for (std::size_t x = 0; x < width; ++x) {
      const double dx = static_cast<double>(x) - static_cast<double>(width) * 0.3 - static_cast<double>(s);
      const double dy = static_cast<double>(y) - static_cast<double>(height) * 0.65;
      m[y * width + x] += 0.05 * gain * std::exp(-(dx * dx + dy * dy) / 8);
    }
  return m;
}

/// WCS cards as WSClean writes them; `cards` overrides or adds any (e.g. a wrong CRVAL1).
struct ModelWcs {
  double scale_rad = 0, ra_deg = 53.0, dec_deg = -28.0;
  std::map<std::string, double> cards;
};
inline ModelWcs model_wcs(double scale_rad, double ra_deg = 53.0, double dec_deg = -28.0,
                          std::map<std::string, double> cards = {}) {
  ModelWcs w;
  w.scale_rad = scale_rad, w.ra_deg = ra_deg, w.dec_deg = dec_deg, w.cards = std::move(cards);
  return w;
}

inline void write_model_fits(const std::string& path, const std::vector<double>& pixels, std::size_t width,
                             std::size_t height, const ModelWcs& wcs) {
  io::FitsHeader h;
  const double scale_deg = wcs.scale_rad * 180 / M_PI;
  h.set_string("CTYPE1", "RA---SIN");
  h.set_double("CRPIX1", static_cast<double>(width / 2 + 1));
  h.set_double("CRVAL1", wcs.ra_deg);
  h.set_double("CDELT1", -scale_deg);
  h.set_string("CUNIT1", "deg");
  h.set_string("CTYPE2", "DEC--SIN");
  h.set_double("CRPIX2", static_cast<double>(height / 2 + 1));
  h.set_double("CRVAL2", wcs.dec_deg);
  h.set_double("CDELT2", scale_deg);
  h.set_string("CUNIT2", "deg");
  h.set_string("CTYPE3", "FREQ");
  h.set_double("CRPIX3", 1);
  h.set_double("CRVAL3", 1.284e9);
  h.set_double("CDELT3", 8.56e8);
  h.set_string("CUNIT3", "Hz");
  h.set_string("CTYPE4", "STOKES");
  h.set_double("CRPIX4", 1);
  h.set_double("CRVAL4", 1);
  h.set_double("CDELT4", 1);
  for (const auto& [key, value] : wcs.cards) h.set_double(key, value);
  const std::vector<float> data(pixels.begin(), pixels.end());
  io::WriteOptions options;
  options.bunit = "JY/PIXEL";
  options.overwrite = true;
  io::write_fits_image(path, data.data(), width, height, h, {static_cast<long>(width), static_cast<long>(height), 1, 1},
                       options);
}

/// V = Σ M(x, y) e^{+2πi(u l + v m + w(n − 1))} in double, u, v, w in wavelengths: what wsclean
/// -predict writes (imaging-plan.md, measured), with WSClean's orientation (pixel_l, pixel_m).
inline std::complex<double> direct_ft(const imaging::ImageGeometry& g, const std::vector<double>& model, double u,
                                      double v, double w) {
  std::complex<double> sum = 0;
  for (std::size_t y = 0; y < g.height; ++y)
    for (std::size_t x = 0; x < g.width; ++x) {
      const double flux = model[y * g.width + x];
      if (flux == 0) continue;
      const double l = imaging::pixel_l(g, x), m = imaging::pixel_m(g, y);
      sum += std::polar(flux, 2 * M_PI * (u * l + v * m + w * imaging::n_minus_one(l, m)));
    }
  return sum;
}

/// The bytes of every file of an MS (table.lock aside, which opening it read-only may touch), to
/// tell that a failed run left it as it was.
inline std::map<std::string, std::string> ms_bytes(const std::string& ms) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(ms))
    if (e.is_regular_file() && e.path().filename() != "table.lock") files[e.path().string()] = slurp(e.path().string());
  return files;
}

}  // namespace gpuclean::test

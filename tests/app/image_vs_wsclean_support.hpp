#pragma once
// What the tests of `gpuclean image -niter` against WSClean 3.1's own loop share (plan §5): the
// truth CSV of data/simulate_ms.py, the FITS outputs of both programs, and the measures taken on
// them (RMS, flux, a source's pixel, sums and maxima around it).

#include <string>
#include <vector>

#include "io/fits_image.hpp"
#include "tests/support/temp_dir.hpp"

namespace gpuclean::test {

/// One truth component as data/simulate_ms.py writes it: a point or an elliptical Gaussian of
/// FWHM axes in arcsec, S(f) = flux_jy · (f / ref_freq_hz)^spectral_index.
struct TruthRow {
  std::string kind;
  double l_arcsec, m_arcsec, flux_jy, ref_freq_hz, spectral_index, fwhm_major_arcsec, fwhm_minor_arcsec;
  double flux_at(double f_hz) const;
  /// The mean of S over these frequencies (an image's MS channel centres).
  double mean_flux(const std::vector<double>& f_hz) const;
};

std::vector<TruthRow> read_truth(const std::string& csv);

struct Source {
  double l_arcsec, m_arcsec, flux_jy;  // flux: the mean over the image's MS channels
};

/// The truth CSV's sources, S_ref · (f / f_ref)^α averaged over the two channel centres.
std::vector<Source> truth(const std::string& csv, double f_low, double f_high);

/// The MS channel centres an output image covers: `per_image` equal channels within its band
/// (CRVAL3 ± CDELT3 / 2).
std::vector<double> ms_channel_centres(const io::FitsImage& image, int per_image);

double rms(const io::FitsImage& f);
double total(const io::FitsImage& f);

/// A position's pixel (0-based), from the header's reference pixel and increments.
void pixel_of(const io::FitsImage& f, double l_arcsec, double m_arcsec, double* x, double* y);
void pixel_of(const io::FitsImage& f, const Source& s, double* x, double* y);

/// The sum (max = false) or the maximum (max = true) of the pixels within `radius` pixels of (x, y).
double around(const io::FitsImage& f, double x, double y, double radius, bool max);

/// The sum of the pixels within `half` pixels of (x, y) in x and in y (a square box).
double box_sum(const io::FitsImage& f, double x, double y, int half);

/// The restoring beam's integral in pixels, π/(4 ln 2) · BMAJ · BMIN / pixel²: Jy/beam → Jy.
double beam_area_pixels(const io::FitsImage& f);

/// Max |a − b| over max |b|.
double max_difference(const io::FitsImage& a, const io::FitsImage& b);

struct Outputs {
  io::FitsImage dirty, psf, residual, model, image;
};

/// PREFIX-{dirty,psf,residual,model,image}.fits (PREFIX e.g. dir/g or dir/g-0001 or dir/g-MFS).
Outputs read_outputs(const std::string& prefix);

/// Runs data/simulate_ms.py with `simulate` (--out dir/NAME.ms is added); returns the MS's path.
std::string simulate(const TempDir& dir, const std::string& name, const std::string& simulate);

/// `gpuclean image OPTIONS -device cpu -name dir/g MS`, then `wsclean OPTIONS -name dir/w MS`
/// (gpuclean first: WSClean writes MODEL_DATA into the MS). Prints both wall times and
/// gpuclean's log; throws with the program's stderr when one fails.
void run_both(const TempDir& dir, const std::string& options, const std::string& ms);

/// Whether a point source counts as recovered (the rule of test_image_clean_vs_wsclean): the
/// model holds more than 3σ within `radius` pixels of it, and that model flux plus the residual at
/// its nearest pixels (the largest within 0.75 px) is its flux within 5 % + 3σ. Adds gtest
/// failures naming `who`; prints the figures.
void expect_point_recovered(const Source& s, const Outputs& run, double sigma, const std::string& who,
                            double radius = 3.0);

}  // namespace gpuclean::test

#include "clean/psf.hpp"

#include <cmath>
#include <cstdio>

#include "clean/errors.hpp"

namespace gpuclean::clean {

namespace {

bool near(double x, double y, double px, double py) {
  return std::abs(x - px) <= kPsfPeakTolerance && std::abs(y - py) <= kPsfPeakTolerance;
}

// A negated PSF or a shifted one would be cleaned with silently: its largest positive sidelobe
// would be taken for the peak. Both are bad input unless the user says otherwise.
void check_peak(const HostImage& psf, std::size_t best, std::size_t lowest, const PsfChecks& checks) {
  const float peak = psf.pixels[best], low = psf.pixels[lowest];
  char buf[400];
  if (-low > peak) {
    std::snprintf(buf, sizeof buf,
                  "the PSF's largest magnitude is negative (%.6g at pixel (%zu, %zu)) while its largest value is "
                  "only %.6g: it looks negated or is not a PSF. Check the file, or give --psf-unchecked to use "
                  "its largest value as the peak anyway.",
                  static_cast<double>(low), lowest % psf.width, lowest / psf.width, static_cast<double>(peak));
    throw InvalidInput(buf);
  }
  const double x = static_cast<double>(best % psf.width), y = static_cast<double>(best / psf.width);
  const double cx = static_cast<double>(psf.width / 2), cy = static_cast<double>(psf.height / 2);
  if (near(x, y, cx, cy)) return;
  if (checks.header_peak && near(x, y, checks.header_peak->first, checks.header_peak->second)) return;
  std::snprintf(buf, sizeof buf,
                "the PSF's peak is at pixel (%.0f, %.0f), far from its centre (%.0f, %.0f)%s: it is shifted or not "
                "a PSF. Check the file, or give --psf-unchecked to use it where it is.",
                x, y, cx, cy, checks.header_peak ? " and from where its header's CRPIX puts it" : "");
  throw InvalidInput(buf);
}

}  // namespace

PreparedPsf prepare_psf(const HostImage& psf, std::size_t image_width, std::size_t image_height,
                        std::string* warning, const PsfChecks& checks) {
  if (psf.width < image_width || psf.height < image_height) {
    throw InvalidInput("the PSF is " + std::to_string(psf.width) + "x" + std::to_string(psf.height) +
                       " but the image is " + std::to_string(image_width) + "x" +
                       std::to_string(image_height) +
                       "; the PSF must be at least as large as the image (make it with the same "
                       "imaging run, e.g. WSClean -make-psf).");
  }
  std::size_t nan_count = 0;
  std::size_t best = 0, lowest = 0;
  for (std::size_t i = 0; i < psf.size(); ++i) {
    const float v = psf.pixels[i];
    if (std::isnan(v)) {
      ++nan_count;
      continue;
    }
    if (v > psf.pixels[best] || std::isnan(psf.pixels[best])) best = i;
    if (v < psf.pixels[lowest] || std::isnan(psf.pixels[lowest])) lowest = i;
  }
  if (nan_count > 0) {
    throw InvalidInput("the PSF holds " + std::to_string(nan_count) +
                       " NaN/blank pixels; a PSF must be complete. Remake it, or check that the "
                       "right file was given.");
  }
  const float peak = psf.pixels[best];
  if (!(peak > 0.0f) || !std::isfinite(peak)) {
    throw InvalidInput("the PSF has no positive finite peak; check that the right file was given.");
  }
  if (checks.strict) check_peak(psf, best, lowest, checks);
  PreparedPsf out;
  out.image = psf;
  out.peak_x = best % psf.width;
  out.peak_y = best / psf.width;
  out.original_peak = peak;
  for (float& v : out.image.pixels) v /= peak;
  out.image.pixels[best] = 1.0f;

  if (warning) {
    warning->clear();
    char buf[256];
    if (std::abs(peak - 1.0f) > 1e-3f) {
      std::snprintf(buf, sizeof buf, "the PSF peak is %.6g, not 1; it was normalised to 1. ", peak);
      *warning += buf;
    }
    if (out.peak_x != psf.width / 2 || out.peak_y != psf.height / 2) {
      std::snprintf(buf, sizeof buf, "the PSF peak is at pixel (%zu, %zu), not at the centre (%zu, %zu); it is used where it is.",
                    out.peak_x, out.peak_y, psf.width / 2, psf.height / 2);
      *warning += buf;
    }
  }
  return out;
}

}  // namespace gpuclean::clean

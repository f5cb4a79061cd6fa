#pragma once
// PSF preparation: checks, peak finding, normalisation to a unit peak.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "clean/host_image.hpp"

namespace gpuclean::clean {

struct PreparedPsf {
  HostImage image;          ///< normalised so that the peak is exactly 1
  std::size_t peak_x = 0;   ///< peak position (WSClean puts it at N/2)
  std::size_t peak_y = 0;
  float original_peak = 1;  ///< the peak before normalisation
};

/// How strictly the PSF's peak is checked.
struct PsfChecks {
  /// Refuse a PSF whose largest value is not its largest magnitude (a negated PSF, or not a PSF)
  /// or whose peak lies more than kPsfPeakTolerance pixels from both its centre and `header_peak`.
  /// Off (--psf-unchecked): use the largest positive value wherever it is, with a warning.
  bool strict = true;
  /// Where the header puts the peak (CRPIX1 - 1, CRPIX2 - 1), if it says.
  std::optional<std::pair<double, double>> header_peak;
};

/// How far (pixels, along either axis) the peak may lie from where the centre or the header
/// puts it: WSClean and CASA put it exactly at (N/2, N/2); a pixel or two covers even/odd
/// conventions.
inline constexpr double kPsfPeakTolerance = 2.0;

/// Checks the PSF against the image and normalises it. Throws InvalidInput when the PSF holds
/// NaN, has no positive peak, is smaller than the image in either axis, or (unless
/// checks.strict is off) its peak is negative in sign or far from the centre. `warning`
/// receives a sentence when the peak was not 1 or not at the centre; it is left empty otherwise.
PreparedPsf prepare_psf(const HostImage& psf, std::size_t image_width, std::size_t image_height,
                        std::string* warning, const PsfChecks& checks = {});

}  // namespace gpuclean::clean

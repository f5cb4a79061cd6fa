#pragma once
// PSF preparation: checks, peak finding, normalisation to a unit peak.

#include <cstddef>
#include <string>

#include "clean/host_image.hpp"

namespace gpuclean::clean {

struct PreparedPsf {
  HostImage image;          ///< normalised so that the peak is exactly 1
  std::size_t peak_x = 0;   ///< peak position (WSClean puts it at N/2)
  std::size_t peak_y = 0;
  float original_peak = 1;  ///< the peak before normalisation
};

/// Checks the PSF against the image and normalises it. Throws InvalidInput when the PSF holds
/// NaN, has no positive peak, or is smaller than the image in either axis. `warning` receives a
/// sentence when the peak was not 1 or not at the centre; it is left empty otherwise.
PreparedPsf prepare_psf(const HostImage& psf, std::size_t image_width, std::size_t image_height,
                        std::string* warning);

}  // namespace gpuclean::clean

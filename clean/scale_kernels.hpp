#pragma once
// Multiscale CLEAN's scales: their kernels, WSClean's automatic scale list and the scale bias
// (Offringa & Smirnov 2017, section 2; Cornwell 2008 for the tapered quadratic).

#include <cstddef>
#include <vector>

#include "clean/host_image.hpp"
#include "clean/multiscale_settings.hpp"

namespace gpuclean::clean {

/// The kernel of a scale `scale` pixels wide: odd-sized, centred, summing to 1, at most
/// max_size a side (the Gaussian's 12-sigma box is cropped to it). Scale 0 is a 1 x 1 delta.
HostImage scale_kernel(double scale, ScaleShape shape, std::size_t max_size);

/// WSClean's automatic scales for a restoring beam `beam_fwhm` pixels wide on an image whose
/// smaller side is `min_side`: 0, then 4, 8, 16, ... x beam_fwhm while below min_side / 2, at most
/// `max_scales` in all (0 = no limit). The doubling starts from twice the beam, which itself is
/// not a scale (radler counts it as the first automatic scale for the bias).
std::vector<double> automatic_scales(double beam_fwhm, std::size_t min_side, std::size_t max_scales);

/// The factor a scale's peak is weighed by when scales compete: bias^-log2(scale / (2 beam_fwhm)),
/// 1 for scale 0 or when there is only one scale.
double scale_bias_factor(double scale, double beam_fwhm, double bias, std::size_t scale_count);

/// `kernel` (odd-sized) centred in a size x size grid of zeros (size odd, at least its width):
/// the GPU gives every scale's kernel the widest one's grid, so that all share one FFT layout.
HostImage embed_centred(const HostImage& kernel, std::size_t size);

}  // namespace gpuclean::clean

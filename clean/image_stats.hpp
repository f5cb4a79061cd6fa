#pragma once
// Statistics that drive CLEAN's stopping rules and the run summary.

#include <cstddef>
#include <cstdint>
#include <span>

#include "clean/host_image.hpp"

namespace gpuclean::clean {

/// The brightest cleanable pixel. Ties go to the lowest index, so runs are deterministic.
struct Peak {
  std::ptrdiff_t index = -1;  ///< -1 when no pixel is cleanable
  float value = 0.0f;         ///< the residual value there (sign kept)
};

/// Peak of |x| (allow_negative) or of x (positive values only) over pixels with mask != 0.
Peak find_peak(std::span<const float> image, std::span<const std::uint8_t> mask, bool allow_negative,
               int threads);

/// RMS over the finite pixels.
double rms(std::span<const float> image);

/// 1.4826 x the median absolute deviation from the median, over the finite pixels: a noise
/// estimate that bright sources do not bias. Computed with the selection library.
double robust_sigma(std::span<const float> image);

/// Sum of the finite pixels.
double total_flux(std::span<const float> image);

/// The largest finite pixel, or 0 when none is positive: a restored image's peak in the summaries.
double positive_peak(std::span<const float> image);

}  // namespace gpuclean::clean

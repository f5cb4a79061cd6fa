#pragma once
// A channel set's multi-frequency synthesis (MFS) images of one Stokes parameter, as WSClean
// makes them: the channels' weighted mean residual and model, and the image restored with the
// beam fitted to their weighted mean PSF (the MFS PSF), or with the user's beam.

#include <vector>

#include "clean/beam.hpp"
#include "clean/host_image.hpp"
#include "clean/plane_set.hpp"

namespace gpuclean::clean {

struct MfsImages {
  HostImage residual, model, restored;
  PixelGaussian beam;  ///< the restoring beam used, in pixels
};

/// `channels` (dirty, PSF, frequency, weight each) with their final `residuals` and `models`, in
/// the same order. `beam`, when given, restores instead of the fitted one (--beam-shape).
MfsImages mfs_images(const std::vector<CleanPlane>& channels, const std::vector<const HostImage*>& residuals,
                     const std::vector<const HostImage*>& models, const PixelGaussian* beam, BeamFit fit,
                     int threads);

/// The channels' weighted mean of `images` (weights from `channels`), summed in double.
HostImage weighted_mean(const std::vector<CleanPlane>& channels, const std::vector<const HostImage*>& images);

}  // namespace gpuclean::clean

#pragma once
// The planes one CLEAN run deconvolves together: the channels of a wideband observation
// (--join-channels) or the Stokes planes of one channel (--join-polarizations), each with its own
// dirty image and PSF. Peaks are found on one integrated image; a component is placed at the
// same pixel in every plane with that plane's own value, and each plane subtracts it through its
// own PSF. A plain run is the one-plane case of the same loop (clark_cpu.cpp, clark_gpu.cpp):
// its integrated image is its residual.
//
// The integration (radler's ImageSet does the same):
//   channels:      I = sum_c w_c r_c, with the channel weights normalised to sum 1;
//   polarizations: I = sqrt(f sum_p r_p^2), radler's sum of squares with its normalisation f
//                  (polarization_factor()), so that an unpolarised source has its Stokes I.
// Both are summed in plane order in float without FMA, so the CPU and the GPU round the same.

#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "clean/clean_settings.hpp"
#include "clean/host_image.hpp"
#include "clean/psf.hpp"

namespace gpuclean::clean {

struct PixelGaussian;

/// One plane of a joined run. The pointers outlive the run.
struct CleanPlane {
  const HostImage* dirty = nullptr;
  const PreparedPsf* psf = nullptr;  ///< its own PSF, prepared (unit peak)
  double frequency_hz = 0.0;
  double weight = 1.0;               ///< channels: its share of the integrated image (any scale)
  /// Restores this plane (null: CleanProblem::restoring_beam).
  const PixelGaussian* restoring_beam = nullptr;
};

struct JoinedPlanes {
  Join join = Join::kChannels;
  std::vector<CleanPlane> planes;
  SpectralFitSettings fit;
  /// The reference frequency of the fitted terms and of the source list [Hz] (0: the middle of
  /// the band, as WSClean's MFS image).
  double reference_frequency_hz = 0.0;
  /// --join-polarizations: f of the integrated image sqrt(f sum_p r_p^2) (polarization_factor()).
  double polarization_factor = 1.0;
  /// GPU: planes held on the device at once (0: all of them). Fewer stream the planes through
  /// the device block by block each major cycle, for sets larger than its memory; the result is
  /// the same.
  std::size_t device_planes = 0;
  /// GPU: the GPUs the planes are split over, in contiguous blocks in plane order, the run on
  /// the first (joined_split_gpu.hpp); the same GPU may come twice. Fewer than two: no split.
  std::vector<int> split_gpus;
};

/// WSClean 3.1's normalisation of joined polarizations: 1/2 for two or four correlations (XX,YY;
/// RR,LL; XX,XY,YX,YY; RR,RL,LR,LL), else 1 (Stokes planes). `pols`: upper case.
double polarization_factor(const std::vector<std::string>& pols);

/// The integration weights of `planes` (channels: normalised to sum 1; polarizations: all the
/// polarization factor).
std::vector<float> integration_weights(const JoinedPlanes& planes);

/// The integrated value of one pixel whose plane values are v[0], v[stride], ... (integrate()'s
/// rule, shared by the CPU loop and its tests; the GPU kernels repeat it with __fmul_rn/__fadd_rn).
inline float integrate(Join join, const float* v, std::size_t stride, const std::vector<float>& w) {
  float s = 0.0f;
  if (join == Join::kChannels) {
    for (std::size_t c = 0; c < w.size(); ++c) s += w[c] * v[c * stride];
    return s;
  }
  for (std::size_t c = 0; c < w.size(); ++c) s += w[c] * (v[c * stride] * v[c * stride]);
  return std::sqrt(s);
}

/// The integrated image of `images` (one per plane, same size): NaN where any plane is NaN.
HostImage integrate_images(Join join, const std::vector<const HostImage*>& images, const std::vector<float>& w);

/// The PSF the integrated image is searched with: the weighted mean of the planes' PSFs,
/// renormalised to a unit peak (its beam sets the automatic scales and the sidelobe limit).
/// The planes' PSFs must have the same size and peak pixel.
PreparedPsf integrated_psf(const JoinedPlanes& planes);

/// Throws InvalidSettings when `settings` cannot join planes this way: Högbom, or --multiscale
/// with polarizations (check_joinable() in deconvolver.hpp adds the problem's own checks).
void check_join_settings(Join join, const CleanSettings& settings);

/// The reference frequency in force: planes.reference_frequency_hz, else the middle of the band.
double reference_frequency(const JoinedPlanes& planes);

}  // namespace gpuclean::clean

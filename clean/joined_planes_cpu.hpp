#pragma once
// The planes of a joined run on the CPU (plane_set.hpp): each plane's residual, model and PSF
// convolver, every scale's minor-cycle PSF window per plane, and the major cycle that subtracts
// every plane through its own PSF and remakes the integrated image the peaks are searched on.
//
// With --multiscale (channels only) a scale's peaks are found on the integrated image (x) K; a
// component then takes each channel's value of that channel's residual (x) K, the minor cycle
// subtracts each channel's PSF (x) K (x) K, and the major cycle spreads each channel's
// components by K into its model and subtracts them through its PSF, as radler's multiscale
// algorithm treats a channel set. Every channel's windows are divided by the integrated PSF's
// (PSF (x) K) peak, so that one loop gain holds for all of them.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "clean/beam.hpp"
#include "clean/deconvolver.hpp"
#include "clean/fft_convolver_cpu.hpp"
#include "clean/minor_cycle_cpu.hpp"
#include "clean/scale_images_cpu.hpp"
#include "clean/scale_set.hpp"
#include "clean/spectral_fit.hpp"

namespace gpuclean::clean {

class JoinedPlanesCpu {
 public:
  /// `scales`: the run's scales, prepared from the integrated PSF.
  JoinedPlanesCpu(const JoinedPlanes& planes, const std::vector<CleanScale>& scales, int threads);

  /// Scale `scale`'s minor cycle over the planes, and Clark's limit for it: the largest exterior
  /// sidelobe of its minor PSF over the planes.
  const JoinedMinor& minor(std::size_t scale) const { return minors_[scale]; }
  float sidelobe(std::size_t scale) const { return sidelobes_[scale]; }

  /// The members' values in every plane's image of `scale` (its residual (x) the scale's kernel,
  /// the residual itself for a delta scale), member-major.
  void gather(std::size_t scale, ScaleImagesCpu& scale_images, const std::vector<ActiveMember>& active,
              std::vector<float>& values);

  /// Components [first, end) of scale `scale` with their plane fluxes (Jy, component-major): each
  /// plane's spread by the scale's kernel into its model, and through its PSF out of its residual;
  /// `residual` (the integrated image) is remade from the planes.
  void subtract(std::size_t scale, ScaleImagesCpu& scale_images, const std::vector<Component>& components,
                std::size_t first, const std::vector<float>& plane_fluxes, HostImage& residual);

  /// Every plane's residual replaced by one made outside the run (MajorCycleSteps::set_residuals);
  /// `residual`, the integrated image, remade from them.
  void set_residuals(const std::vector<const float*>& planes, HostImage& residual);
  const std::vector<HostImage>& models() const { return models_; }
  const std::vector<HostImage>& residuals() const { return residuals_; }

  /// The planes' images into result.planes (restored with their beams, or `beam`), and the
  /// spectral terms when fitting.
  void finish(const PixelGaussian* beam, int threads, CleanResult& result);

 private:
  void integrate(HostImage& residual) const;

  const JoinedPlanes& planes_;
  std::size_t width_, height_;
  std::optional<SpectralFit> fit_;
  std::vector<float> weights_;
  std::vector<std::vector<PreparedPsf>> windows_;  // [scale][plane]
  std::vector<JoinedMinor> minors_;                // [scale]
  std::vector<float> sidelobes_;                   // [scale]
  std::vector<HostImage> residuals_, models_;
  std::vector<std::unique_ptr<FftConvolverCpu>> conv_;
  std::vector<float> delta_, scaled_;
};

}  // namespace gpuclean::clean

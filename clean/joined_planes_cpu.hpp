#pragma once
// The planes of a joined run on the CPU (plane_set.hpp): each plane's residual, model and PSF
// convolver, the minor cycle's per-plane PSF windows, and the major cycle that subtracts every
// plane through its own PSF and remakes the integrated image the peaks are searched on.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "clean/beam.hpp"
#include "clean/deconvolver.hpp"
#include "clean/fft_convolver_cpu.hpp"
#include "clean/minor_cycle_cpu.hpp"
#include "clean/spectral_fit.hpp"

namespace gpuclean::clean {

class JoinedPlanesCpu {
 public:
  /// `patch`: the minor cycle's half-width.
  JoinedPlanesCpu(const JoinedPlanes& planes, std::size_t patch, int threads);

  const JoinedMinor& minor() const { return minor_; }
  /// The largest |PSF| outside the patch over the planes (Clark's limit for the joined minor cycle).
  float sidelobe() const { return sidelobe_; }

  /// The members' plane values from the residuals, member-major.
  void gather(const std::vector<ActiveMember>& active, std::vector<float>& values) const;

  /// Components [first, end) with their plane fluxes: into each plane's model, through each
  /// plane's PSF out of its residual; `residual` (the integrated image) is remade from the planes
  /// and `model` gets the components' integrated fluxes.
  void subtract(const std::vector<Component>& components, std::size_t first, const std::vector<float>& plane_fluxes,
                HostImage& residual, HostImage& model);

  /// The planes' images into result.planes (restored with their beams, or `beam`), and the
  /// spectral terms when fitting.
  void finish(const PixelGaussian* beam, int threads, CleanResult& result);

 private:
  const JoinedPlanes& planes_;
  std::size_t width_, height_;
  int threads_;
  std::optional<SpectralFit> fit_;
  std::vector<PreparedPsf> windows_;
  JoinedMinor minor_;
  float sidelobe_ = 0.0f;
  std::vector<HostImage> residuals_, models_;
  std::vector<std::unique_ptr<FftConvolverCpu>> conv_;
  std::vector<float> delta_;
};

}  // namespace gpuclean::clean

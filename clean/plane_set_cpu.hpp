#pragma once
// The planes a run cleans on the CPU (plane_set.hpp), one or several joined, behind one
// interface, so that no algorithm asks which: the CPU image state (cpu_image_state.hpp) owns it
// and an algorithm that subtracts through the PSF (Clark's) plans it for its scales.
//   one plane: the minor cycle works on the members' own values and the major cycle subtracts
//     through the problem's PSF from the state's residual (the fast path: not the joined code
//     with one plane, whose rounding differs: minor_cycle_cpu.hpp);
//   joined (JoinedPlanesCpu): the members' values in every plane are gathered, the minor cycle
//     works on them, each plane subtracts through its own PSF and the state's residual is the
//     integrated image remade from the planes.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/fft_convolver_cpu.hpp"
#include "clean/joined_planes_cpu.hpp"
#include "clean/minor_cycle_cpu.hpp"
#include "clean/scale_images_cpu.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean {

class PlaneSetCpu {
 public:
  /// `scales`: the run's; with joined planes each scale's sidelobe becomes the largest over the
  /// planes' minor PSFs (Clark's limit). `residual`: the state's (the integrated one when joined).
  PlaneSetCpu(const CleanProblem& problem, std::vector<CleanScale>& scales, HostImage& residual, int threads);

  /// The minor cycle on `active` with `minor` (its PSF set to the scale's): on the members' values,
  /// or on every plane's values of scale `scale`'s image, gathered now. Appends the components
  /// (and with joined planes their plane fluxes, component-major).
  std::size_t minor_cycle(MinorCycleCpu& minor, std::size_t scale, ScaleImagesCpu& scale_images,
                          std::vector<ActiveMember>& active, double limit, double gain, bool allow_negative,
                          std::size_t budget, std::vector<Component>& components, std::vector<float>& plane_fluxes);
  /// Components [first, end) of scale `scale` out of the residual: `delta`, their sum at their
  /// pixels (one plane), through the PSF; or each plane's fluxes (divided by `psf_peak`, the
  /// scale's PSF peak, as the components' were) through its own PSF, the integrated residual
  /// remade. `delta` is spent.
  void subtract(std::size_t scale, float psf_peak, ScaleImagesCpu& scale_images, std::size_t first,
                std::vector<float>& delta, const std::vector<Component>& components,
                std::vector<float>& plane_fluxes);

  void set_residuals(const std::vector<const float*>& planes);
  std::vector<HostImage> model_images(const HostImage& model) const;
  std::vector<HostImage> residual_images() const;
  /// Joined planes: each plane's images into result.planes (restored with their beams or the
  /// problem's, timed), and the spectral terms when fitting.
  void finish(int threads, CleanResult& result);

 private:
  const CleanProblem& problem_;
  HostImage& residual_;
  std::optional<JoinedPlanesCpu> joined_;
  std::optional<FftConvolverCpu> psf_conv_;  // one plane
  std::vector<float> plane_values_;
};

}  // namespace gpuclean::clean

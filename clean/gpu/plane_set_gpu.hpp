#pragma once
// The planes a run cleans on the GPU (plane_set.hpp; PlaneSetCpu is its reference), one or
// several joined, behind one interface, so that no algorithm asks which: the GPU image state
// (gpu_image_state.hpp) owns it and an algorithm that subtracts through the PSF (Clark's) plans
// it for its scales.
//   one plane: the minor cycle works on the members' own values and the major cycle subtracts
//     through the PSF's spectrum (GpuImageState's) from the state's residual;
//   joined (JoinedPlanesGpu): the members' values in every plane are gathered, the minor cycle
//     works on them, each plane subtracts through its own PSF and the state's residual is the
//     integrated image remade from the planes; split over several GPUs (JoinedSplitGpu) when
//     JoinedPlanes::split_gpus names two or more.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/joined_planes_gpu.hpp"
#include "clean/gpu/joined_split_gpu.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/gpu/scale_images_gpu.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean::gpu {

class PlaneSetGpu {
 public:
  /// `scales`: the run's; with joined planes each scale's sidelobe becomes the largest over the
  /// planes' minor PSFs (Clark's limit). `max_members`: the largest active set. One plane needs
  /// the state made with PsfOnDevice::kSpectrum.
  PlaneSetGpu(GpuResources& resources, GpuImageState& state, const CleanProblem& problem,
              std::vector<CleanScale>& scales, std::size_t max_members);

  /// The minor cycle of `request` on `engine` for scale `scale`, whose first component is
  /// `first` and which makes at most `budget`: on the members' values, or on every plane's values
  /// of the scale's image, gathered now.
  std::uint32_t minor_cycle(MinorCycleEngine& engine, const MinorCycleRequest& request, std::size_t scale,
                            ScaleImagesGpu& scale_images, std::size_t first, std::size_t budget);
  /// The cycle's components (from `first`, their per-pixel sums in the state's scratch, already
  /// spread by the scale's kernel into the model) out of the residual: through the PSF, or each
  /// plane's through its own PSF (and into its model), the integrated residual remade.
  void subtract(std::size_t scale, ScaleImagesGpu& scale_images, const MinorCycleEngine& engine, std::size_t first);

  void set_residuals(const std::vector<const float*>& planes);
  std::vector<HostImage> model_images();
  std::vector<HostImage> residual_images();
  /// The PSF's convolver freed (the restoration needs the room).
  void release() { conv_.reset(); }
  /// Joined planes: each plane's images into result.planes (restored on the GPU, timed), the
  /// plane fluxes and the spectral terms when fitting.
  void finish(CleanResult& result);

 private:
  GpuImageState& st_;
  const CleanProblem& problem_;
  /// The joined planes' f(planes), one GPU's or split (one of the two is set).
  template <class F>
  decltype(auto) joined(F&& f) {
    return split_ ? f(*split_) : f(*joined_);
  }

  std::optional<JoinedPlanesGpu> joined_;
  std::unique_ptr<JoinedSplitGpu> split_;
  std::optional<FftConvolverGpu> conv_;  // one plane
};

}  // namespace gpuclean::clean::gpu

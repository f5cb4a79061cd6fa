#pragma once
// The planes of a joined run on the GPU (plane_set.hpp; JoinedPlanesCpu is its reference): each
// plane's residual, model and PSF spectrum, every scale's minor-cycle patch per plane, the
// integration weights and the spectral fit. The integrated image the peaks are searched on is
// GpuImageState's residual; subtract() remakes it after every major cycle.
//
// Where the planes live: all of them on the device (JoinedPlanes::device_planes = 0), or, for a
// set larger than the device, on the host, streamed through the device in blocks of
// device_planes each major cycle: the members' values are gathered block by block, the minor
// cycle works on those alone, and each block's planes are subtracted and added into the
// integrated image in plane order, so that the result is the resident run's, bit for bit.

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/joined_common_gpu.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/gpu/scale_images_gpu.hpp"
#include "clean/scale_set.hpp"
#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean::gpu {

class JoinedPlanesGpu {
 public:
  /// `scales`: the run's, prepared from the integrated PSF; `max_members`: the largest active set.
  JoinedPlanesGpu(GpuResources& resources, const JoinedPlanes& planes, const std::vector<CleanScale>& scales,
                  std::size_t width, std::size_t height, std::size_t max_members);

  int planes() const { return static_cast<int>(planes_.planes.size()); }
  /// Planes on the device at once (all of them unless streamed).
  std::size_t block() const { return block_; }
  /// Clark's limit for scale `scale`: the largest exterior sidelobe of its minor PSF over the planes.
  float sidelobe(std::size_t scale) const { return inputs_->sidelobe(scale); }

  /// Room for `more` components after the `used` ones (kept).
  void reserve_components(std::size_t used, std::size_t more) { inputs_->reserve_components(used, more); }
  /// The active set's (`count` pixels, device) values in every plane's image of `scale` (its
  /// residual (x) the scale's kernel, the residual itself for a delta scale).
  void gather(std::size_t scale, ScaleImagesGpu& scale_images, const std::uint32_t* pixels, std::uint32_t count);
  /// The minor cycle's request for `scale`, whose first component is `first`, over the last gather.
  JoinedMinorRequest request(std::size_t scale, std::size_t first) { return inputs_->request(scale, first); }
  /// The cycle's components (from `first`, as `engine` made them) of `scale`: each plane's spread
  /// by the scale's kernel into its model and through its own PSF out of its residual; the
  /// integrated residual and its masked copy (GpuImageState's) remade.
  void subtract(std::size_t scale, ScaleImagesGpu& scale_images, const MinorCycleEngine& engine, std::size_t first,
                GpuImageState& st);

  /// Every plane's residual replaced by one made outside the run (MajorCycleSteps::set_residuals):
  /// each to the device (or the host copy, when streamed), and the integrated residual in `st`
  /// remade from them in plane order, as subtract() does.
  void set_residuals(const std::vector<const float*>& planes, GpuImageState& st);
  /// Every plane's model and residual so far, to the host (the run goes on).
  std::vector<HostImage> model_images();
  std::vector<HostImage> residual_images();

  /// The planes' images to the host (restored on the GPU with their beams, or `beam`), the
  /// components' plane fluxes, and the spectral terms when fitting.
  void finish(const PixelGaussian* beam, CleanResult& result);

  /// Device bytes for `planes` planes of width x height with PSFs of psf_width x psf_height, the
  /// scales' patches of half-widths `patches`, `block` of them on the device at once (0: all),
  /// active sets of up to `max_members` and `max_components` components.
  static std::size_t bytes_needed(std::size_t planes, std::size_t block, std::size_t width, std::size_t height,
                                  std::size_t psf_width, std::size_t psf_height, const std::vector<std::size_t>& patches,
                                  std::size_t max_members, std::size_t max_components);

 private:
  float* residual(std::size_t p) { return residuals_.data() + (p % block_) * n_; }
  float* model(std::size_t p) { return models_.data() + (p % block_) * n_; }
  float* delta(std::size_t p) { return deltas_.data() + (p % block_) * n_; }
  bool streamed() const { return block_ < planes_.planes.size(); }
  /// Streamed: planes [first, first + count) of the residuals (and the models) to the device, and back.
  void bring(std::size_t first, std::size_t count, bool models);
  void put_back(std::size_t first, std::size_t count, bool models);
  /// The PSF convolver set to plane p's spectrum (made now when streamed).
  FftConvolverGpu& psf_conv(std::size_t p);
  /// Plane images to the host: the models or the residuals.
  std::vector<HostImage> images(bool models);

  GpuResources& resources_;
  cudaStream_t s_;
  const JoinedPlanes& planes_;
  std::size_t width_, height_, n_, block_;
  cuda::DeviceBuffer<float> residuals_, models_, deltas_;
  cuda::DeviceBuffer<float> d_psf_;                       // a PSF: made spectra of (streamed: each major cycle)
  std::optional<JoinedMinorInputs> inputs_;
  std::vector<std::shared_ptr<const Spectrum>> spectra_;  // resident: every plane's PSF spectrum
  std::unique_ptr<FftConvolverGpu> conv_;                 // shared by the planes
  std::vector<HostImage> host_residuals_, host_models_;   // streamed: the planes between blocks
};

}  // namespace gpuclean::clean::gpu

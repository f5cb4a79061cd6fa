#pragma once
// What a joined run keeps on the device its minor cycle runs on, shared by JoinedPlanesGpu (all
// planes on one GPU) and JoinedSplitGpu (the planes over several): every plane's scale patches
// and each scale's largest sidelobe, the integration weights, the spectral fit's inputs, the
// members' plane values and the components' plane fluxes. And the planes' restoration, which
// both run per plane on the device that holds it.

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/scale_set.hpp"
#include "clean/spectral_fit.hpp"
#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean::gpu {

class JoinedMinorInputs {
 public:
  /// On resources' device and stream. Each plane's PSF is uploaded to `d_psf` (room for one PSF,
  /// the caller's) and `each_psf(p)` (may be empty) called with it there, on the stream, before
  /// the next plane's upload: JoinedPlanesGpu makes the plane's spectrum from it.
  JoinedMinorInputs(GpuResources& resources, const JoinedPlanes& planes, const std::vector<CleanScale>& scales,
                    std::size_t max_members, float* d_psf, const std::function<void(std::size_t)>& each_psf);

  float sidelobe(std::size_t scale) const { return sidelobes_[scale]; }
  /// Room for `more` components after the `used` ones (kept).
  void reserve_components(std::size_t used, std::size_t more);
  /// The minor cycle's request for `scale`, whose first component is `first`.
  JoinedMinorRequest request(std::size_t scale, std::size_t first);
  /// Member m's value in plane p at [m * planes + p].
  float* member_values() { return member_values_.data(); }
  /// Plane p's components from `first` on (one row of comp_stride()).
  float* comp_fluxes(std::size_t plane, std::size_t first) { return comp_fluxes_.data() + plane * comp_capacity_ + first; }
  std::size_t comp_stride() const { return comp_capacity_; }
  const float* iweights() const { return iweights_.data(); }
  /// The first `count` components' plane fluxes, the reference frequency and, when fitting, the
  /// spectral terms into result.components (waits for the stream).
  void finish(std::size_t count, CleanResult& result);

  /// Device bytes of the patches, the members' values (and the engine's copy), the components'
  /// plane fluxes and records, and the weights and fit.
  static std::size_t bytes_needed(std::size_t planes, const std::vector<std::size_t>& patches,
                                  std::size_t max_members, std::size_t max_components);

 private:
  cudaStream_t s_;
  const JoinedPlanes& planes_;
  std::optional<SpectralFit> fit_;
  std::vector<float> sidelobes_;
  cuda::DeviceBuffer<float> iweights_, projection_, comp_fluxes_, member_values_;
  cuda::DeviceBuffer<double> log_x_, log_w_;        // --fit-spectral-log-pol's inputs
  std::vector<cuda::DeviceBuffer<float>> patches_;  // per scale: offset-major, the planes' values together
  std::size_t comp_capacity_ = 0;
};

/// A joined run's planes restored one by one on one device: one convolver per restoring layout
/// (every ordinary beam of these images shares one), its spectrum set per beam.
class PlaneRestorer {
 public:
  PlaneRestorer(GpuResources& resources, cudaStream_t stream, std::size_t width, std::size_t height)
      : resources_(resources), s_(stream), width_(width), height_(height) {}
  /// The plane's model and residual to `out`, and, with a beam, its restored image (model (x)
  /// beam + residual), made in `scratch` (device, an image).
  void restore(const PixelGaussian* beam, float* model, const float* residual, float* scratch, PlaneImages& out);

 private:
  GpuResources& resources_;
  cudaStream_t s_;
  std::size_t width_, height_;
  std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<FftConvolverGpu>> restorers_;
  std::map<const PixelGaussian*, std::shared_ptr<const Spectrum>> beams_;
};

}  // namespace gpuclean::clean::gpu

#pragma once
// The image state (image_state.hpp) on the GPU, for every GPU algorithm: the images on the
// device for the whole run, the statistics that drive the stopping rules (computed on the
// device; a few scalars come back), the --local-rms map and its weights, the PSF's spectrum
// (from GpuResources' cache when an earlier run had the same PSF), the component list, the plane
// set (plane_set_gpu.hpp) once an algorithm that subtracts through the PSF plans it, the
// restoration, and the bookkeeping of GPU memory. Large transfers go through GpuResources'
// pinned staging; none waits on the whole device.

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clean/beam.hpp"
#include "clean/deconvolver.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/host_image_prefetch.hpp"
#include "clean/gpu/local_rms_gpu.hpp"
#include "clean/image_state.hpp"
#include "clean/image_stats.hpp"
#include "clean/scale_set.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/selector.hpp"

namespace gpuclean::clean::gpu {

/// What the run needs of the PSF on the device besides what it uploads itself.
enum class PsfOnDevice {
  kNone,
  kSpectrum,  ///< its transform for the major cycles (Clark), unless the planes are joined: they
              ///< subtract through each plane's own PSF (plane_set_gpu.hpp)
};

class PlaneSetGpu;

class GpuImageState final : public ImageState {
 public:
  /// Uploads the dirty image (as the residual) and the mask. `selector` is the backend name for
  /// the robust noise estimate (and Clark's active sets); an unknown one throws InvalidSettings.
  /// With PsfOnDevice::kSpectrum the PSF goes first, on the side stream, where it is hashed and,
  /// unless its spectrum is cached, transformed while the images upload.
  GpuImageState(GpuResources& resources, const CleanProblem& problem, const CleanSettings& settings,
                PsfOnDevice psf = PsfOnDevice::kNone);
  ~GpuImageState() override;
  GpuImageState(const GpuImageState&) = delete;
  GpuImageState& operator=(const GpuImageState&) = delete;

  // ImageState (image_state.hpp). The components come back with scale 0.
  double robust_sigma() override;
  double model_flux() override;
  /// The brightest cleanable pixel (same rule as clean::find_peak).
  Peak peak() override { return peak_of(masked_.data()); }
  NoiseMapRange make_noise_map(const LocalRmsSettings& settings, double window_fwhm_pixels) override;
  void drop_weights() override { weighing_ = false; }
  std::vector<Component> components(std::size_t count) override;
  void restrict(const std::vector<std::uint8_t>& mask) override { restrict_mask(mask); }
  void set_residuals(const std::vector<const float*>& planes) override;
  std::vector<HostImage> model_images() override;
  std::vector<HostImage> residual_images() override;
  /// The noise map (when kept), the residual, model and the first result.iterations components
  /// to the host, the restoration on the GPU when the problem asks for it (timed, with the
  /// quantiles of the restored image it asks for), the planes', the peak memory. The
  /// restoration runs on the main stream while the residual and the model come back on the side
  /// stream.
  void finish(CleanResult& result) override;

  /// The plane set for `scales` (the run's; joined planes set their sidelobes) and active sets of
  /// up to `max_members`, made once.
  PlaneSetGpu& plan(std::vector<CleanScale>& scales, std::size_t max_members);
  PlaneSetGpu& planes() { return *planes_; }
  /// The --local-rms weights min_rms / rms (device) while in force, else null.
  const float* weights() const { return weighing_ ? rms_.weights.data() : nullptr; }

  /// The PSF's spectrum (PsfOnDevice::kSpectrum), perhaps still being computed on the side
  /// stream: FftConvolverGpu waits for it on the main stream.
  const std::shared_ptr<const Spectrum>& psf_spectrum() const { return psf_spectrum_; }
  /// With PsfOnDevice::kSpectrum: the largest |PSF| outside the beam patch (--beam-patch), found
  /// on the device (clean::largest_exterior_sidelobe).
  float exterior_sidelobe() const { return exterior_sidelobe_; }

  cudaStream_t stream() const { return stream_; }
  const CleanSettings& settings() const { return settings_; }
  std::size_t width() const { return width_; }
  std::size_t height() const { return height_; }
  std::size_t size() const { return width_ * height_; }
  float* residual() { return residual_.data(); }
  float* masked() { return masked_.data(); }
  float* model() { return model_.data(); }
  /// An image-sized buffer free between the noise estimate and the next one (Clark's delta).
  float* scratch() { return scratch_.data(); }
  const std::uint8_t* mask() const { return mask_.data(); }
  const select::Selector& selector() const { return *selector_; }
  select::Workspace& workspace() { return workspace_; }

  /// The residual replaced by a host image of the same size (made outside the run); the noise
  /// estimate's pixel count is counted again.
  void set_residual(const float* residual);
  /// The residual was remade in place on the device (a joined run's integrated image): its
  /// masked copy and the noise estimate's pixel count follow it.
  void residual_changed();
  /// The model and the residual so far, to the host (the run goes on).
  HostImage model_image();
  HostImage residual_image();
  /// From now on only `mask`'s pixels are cleanable (--auto-mask's second phase of Högbom).
  void restrict_mask(const std::vector<std::uint8_t>& mask);

  /// peak()'s for another search image (NaN where not cleanable): a scale's.
  Peak peak_of(const float* masked);

  /// Room for `more` components after the `used` ones; grows the device list (kept contents).
  void reserve_components(std::size_t used, std::size_t more);
  /// The components in the device list: the steps add each minor cycle's.
  std::size_t component_count() const { return component_count_; }
  void add_components(std::size_t made) { component_count_ += made; }
  std::size_t component_capacity() const { return comp_pixels_.size(); }
  /// The first `count` components' pixel indices, to the host (--auto-mask's switch).
  std::vector<std::uint32_t> component_pixels(std::size_t count);
  std::uint32_t* comp_pixels() { return comp_pixels_.data(); }
  float* comp_fluxes() { return comp_fluxes_.data(); }

  /// Notes the device memory in use now; the largest is reported as the peak.
  void sample_memory();

  /// Where the constructor's time went (the run's setup parts, in seconds).
  struct SetupSeconds {
    double host_images = 0, psf = 0, allocations = 0, uploads = 0;
  };
  const SetupSeconds& setup_seconds() const { return setup_; }
  /// Seconds in the device-memory queries so far (cudaMemGetInfo: a call into the kernel driver).
  double memory_query_seconds() const { return memory_query_seconds_; }
  std::size_t peak_memory() const { return peak_used_; }

 private:
  HostImage image_of(const float* device_image);
  std::shared_ptr<const Spectrum> fetch_psf_spectrum(const PreparedPsf& psf);
  void download(cudaStream_t stream, CleanResult& result, std::size_t iterations);
  void enqueue_restore(const PixelGaussian& beam);
  void finish_restore(const CleanProblem& problem, CleanResult& result);
  std::size_t finite_pixels();

  GpuResources& resources_;
  cudaStream_t stream_;
  const CleanProblem& problem_;
  const CleanSettings& settings_;
  std::size_t width_, height_;
  cuda::DeviceBuffer<float> residual_, masked_, model_, scratch_;
  cuda::DeviceBuffer<std::uint8_t> mask_;
  cuda::DeviceBuffer<unsigned long long> scalars_;
  cuda::DeviceBuffer<double> sums_;
  cuda::DeviceBuffer<unsigned long long> counts_;  // finite dirty pixels; restored pixels not NaN
  cuda::DeviceBuffer<std::uint32_t> comp_pixels_;
  cuda::DeviceBuffer<float> comp_fluxes_;
  std::unique_ptr<select::Selector> selector_;
  select::Workspace workspace_;
  std::optional<std::size_t> n_finite_;  // read back when first needed
  std::shared_ptr<const Spectrum> psf_spectrum_;
  float exterior_sidelobe_ = 0.0f;
  std::size_t free_at_start_ = 0, peak_used_ = 0;
  std::size_t component_count_ = 0;
  // The host images the results come back into, made while the GPU works.
  std::unique_ptr<HostImagePrefetch> host_residual_, host_model_, host_restored_;
  LocalRmsDevice rms_;
  bool weighing_ = false;
  SetupSeconds setup_;
  double memory_query_seconds_ = 0.0;
  std::unique_ptr<PlaneSetGpu> planes_;  // last: it refers to the buffers above
};

}  // namespace gpuclean::clean::gpu

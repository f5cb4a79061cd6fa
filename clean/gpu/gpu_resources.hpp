#pragma once
// What a GPU deconvolver keeps from one run to the next on its device, so that a second
// observation of the same size pays none of it again: two streams, the cuFFT plans, the pinned
// staging area for transfers, and the spectra of recent PSFs and restoring beams. Device
// buffers come from CUDA's stream-ordered pool, which is told to keep freed memory, so the next
// observation's images and workspaces are served without cudaMalloc.
//
// Each clean worker owns one (batch mode runs several per GPU): nothing here is shared between
// workers, and nothing waits on the whole device.

#include <cstddef>

#include "clean/gpu/fft_plan_cache.hpp"
#include "clean/gpu/spectrum_cache.hpp"
#include "select/cuda/pinned_staging.hpp"
#include "select/cuda/stream.hpp"

namespace gpuclean::clean::gpu {

class GpuResources {
 public:
  /// Spectra kept per kind: enough for two alternating PSFs or beams of one image size.
  static constexpr std::size_t kPsfSpectra = 2;
  static constexpr std::size_t kBeamSpectra = 2;

  /// On the current device.
  GpuResources();
  ~GpuResources();
  GpuResources(const GpuResources&) = delete;
  GpuResources& operator=(const GpuResources&) = delete;

  /// The observation's stream: everything of a run is ordered on it.
  cudaStream_t stream() const { return stream_.get(); }
  void synchronize() const { stream_.synchronize(); }
  /// Work that may overlap the main stream (the PSF's upload and transform), joined to it by
  /// the events of what it produces. It has its own plans, so the two never share cuFFT's work
  /// area.
  cudaStream_t side_stream() const { return side_.get(); }

  /// Makes both caches' plans for a width x height image's centred PSF of its size (also the
  /// usual restoring beam's layout), as its first run would: made with no other work on the
  /// device, they do not wait for other workers' (cuFFT's plan making waits for the device).
  void prepare_plans(std::size_t width, std::size_t height);

  FftPlanCache& plans() { return plans_; }
  FftPlanCache& side_plans() { return side_plans_; }
  cuda::PinnedStaging& staging() { return staging_; }
  SpectrumCache& psf_spectra() { return psf_spectra_; }
  SpectrumCache& beam_spectra() { return beam_spectra_; }
  int device() const { return device_; }

  /// Seconds the worker spent making these resources (GpuDeconvolver times it); the first run
  /// takes it into its setup (std::exchange), later runs find 0.
  double unreported_creation_seconds = 0.0;

 private:
  int device_ = 0;
  // Declared before what is freed on them: members are destroyed in reverse order.
  cuda::Stream stream_, side_;
  cuda::PinnedStaging staging_;
  FftPlanCache plans_, side_plans_;
  SpectrumCache psf_spectra_{kPsfSpectra}, beam_spectra_{kBeamSpectra};
};

}  // namespace gpuclean::clean::gpu

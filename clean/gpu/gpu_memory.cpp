#include "clean/gpu_memory.hpp"

#include <algorithm>
#include <string>

#include "clean/errors.hpp"
#include "clean/gpu/algorithm_memory.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/local_rms_gpu.hpp"
#include "clean/gpu/scale_images_gpu.hpp"
#include "clean/scale_set.hpp"
#include "select/cuda/device_info.hpp"
#include "select/registry.hpp"

namespace gpuclean::clean {
namespace {

using gpu::FftConvolverGpu;
using gpu::GpuResources;
using gpu::local_rms_gpu_bytes;
using gpu::ScaleImagesGpu;

// The parts of a run's device memory, by what they depend on.
struct RunBytes {
  std::size_t fixed = 0;         // images, selection, the algorithm's own, components, slack
  std::size_t psf = 0;           // the PSF as uploaded (until its transform has read it)
  std::size_t psf_spectrum = 0;  // one spectrum (or working buffer) in the major cycles' layout
  std::size_t psf_work = 0;      // cuFFT's work area for that layout
  std::size_t beam_spectrum = 0, beam_work = 0;  // the same for the restoration
};

RunBytes run_bytes(const RunShape& shape, const CleanSettings& settings) {
  const std::size_t width = shape.width, height = shape.height, psf_width = shape.psf_width,
                    psf_height = shape.psf_height;
  const std::size_t n = width * height;
  const std::size_t k = std::min(settings.select_k, n);
  RunBytes b;
  const std::size_t images = n * (4 * sizeof(float) + 1);  // residual, masked, model, scratch, mask
  auto sel = select::builtin_registry().make(settings.select_backend);
  const std::size_t select = std::max({sel->top_k_workspace_bytes(n, k), sel->order_statistics_workspace_bytes(n, 1),
                                       sel->robust_statistics_workspace_bytes(n)});
  // Multiscale: every scale's convolver and search images, its patch, and while the scales are
  // prepared the PSF's two convolutions with the widest kernel. --auto-mask: a mask per scale
  // and two search images.
  const std::vector<CleanScale> scales = gpu::estimated_scales(shape, settings);
  std::size_t multiscale = settings.auto_mask > 0.0 || settings.auto_mask_absolute > 0.0 ? scales.size() * n + 2 * n * sizeof(float) : 0;
  if (settings.multiscale.enabled) {
    multiscale += ScaleImagesGpu::bytes_needed(scales, width, height) + 3 * psf_width * psf_height * sizeof(float);
    const HostImage& widest = scales.back().kernel;
    multiscale += FftConvolverGpu::bytes_needed(widest.width, widest.height, widest.width / 2, widest.height / 2,
                                                psf_width, psf_height);
    for (const CleanScale& sc : scales) multiscale += (2 * sc.patch + 1) * (2 * sc.patch + 1) * sizeof(float);
  }
  // --local-rms: the weights and two search images, and while the map is made its two sums.
  if (settings.local_rms.enabled) multiscale += local_rms_gpu_bytes(width, height) + 2 * n * sizeof(float);
  const std::size_t algorithm = gpu::gpu_bytes_of(settings.algorithm)(shape, settings, scales);
  const std::size_t comps = std::min<std::size_t>(settings.niter, 1u << 20) * 8 * 2;
  const std::size_t slack = 64u << 20;  // CUDA context allocations, cuFFT plans, alignment
  b.fixed = images + select + algorithm + multiscale + comps + slack;
  b.psf = psf_width * psf_height * sizeof(float);
  const std::size_t cx = psf_width / 2, cy = psf_height / 2;
  b.psf_spectrum = FftConvolverGpu::spectrum_bytes(psf_width, psf_height, cx, cy, width, height);
  b.psf_work = FftConvolverGpu::work_bytes(psf_width, psf_height, cx, cy, width, height);
  if (shape.beam) {
    b.beam_spectrum = FftConvolverGpu::restoring_spectrum_bytes(*shape.beam, width, height);
    b.beam_work = FftConvolverGpu::restoring_work_bytes(*shape.beam, width, height);
  } else {
    b.beam_spectrum = b.psf_spectrum;
    b.beam_work = b.psf_work;
  }
  return b;
}

// gpu_bytes_needed() from its parts.
std::size_t bytes_needed(const RunBytes& b) {
  // Through the run: the PSF's new spectrum and the plans of both streams for its layout. During
  // the major cycles: the uploaded PSF and the convolver's working buffer; during the
  // restoration: the beam's new spectrum, its working buffer and its plans.
  const std::size_t major = b.psf + b.psf_spectrum;
  const std::size_t restore = 2 * b.beam_spectrum + b.beam_work;
  return b.fixed + b.psf_spectrum + 2 * b.psf_work + std::max(major, restore);
}

}  // namespace

std::size_t gpu_bytes_needed(const RunShape& shape, const CleanSettings& settings) {
  return bytes_needed(run_bytes(shape, settings));
}

std::size_t gpu_bytes_per_worker(const RunShape& shape, const CleanSettings& settings) {
  const RunBytes b = run_bytes(shape, settings);
  // The caches' other entries and the restoration's plans stay between runs.
  return bytes_needed(b) + (GpuResources::kPsfSpectra - 1) * b.psf_spectrum +
         GpuResources::kBeamSpectra * b.beam_spectrum + b.beam_work;
}

}  // namespace gpuclean::clean

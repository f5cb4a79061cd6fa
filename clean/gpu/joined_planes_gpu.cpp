#include "clean/gpu/joined_planes_gpu.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "clean/errors.hpp"
#include "clean/gpu/joined_kernels.hpp"
#include "clean/gpu/scale_set_gpu.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/pinned_staging.hpp"

namespace gpuclean::clean::gpu {

JoinedPlanesGpu::JoinedPlanesGpu(GpuResources& resources, const JoinedPlanes& planes,
                                 const std::vector<CleanScale>& scales, std::size_t width, std::size_t height,
                                 std::size_t max_members)
    : resources_(resources),
      s_(resources.stream()),
      planes_(planes),
      width_(width),
      height_(height),
      n_(width * height),
      block_(planes.device_planes > 0 ? std::min(planes.device_planes, planes.planes.size()) : planes.planes.size()) {
  const std::size_t np = planes.planes.size();
  residuals_ = cuda::DeviceBuffer<float>(block_ * n_, s_);
  models_ = cuda::DeviceBuffer<float>(block_ * n_, s_);
  deltas_ = cuda::DeviceBuffer<float>(block_ * n_, s_);
  // Every plane's PSF once: its spectrum (kept when resident; the first's makes the convolver).
  d_psf_ = cuda::DeviceBuffer<float>(planes.planes.front().psf->image.size(), s_);
  std::shared_ptr<const Spectrum> first_spectrum;
  inputs_.emplace(resources, planes, scales, max_members, d_psf_.data(), [&](std::size_t p) {
    if (streamed() && p > 0) return;
    const PreparedPsf& psf = *planes.planes[p].psf;
    std::shared_ptr<const Spectrum> spectrum = kernel_spectrum(resources.plans(), s_, s_, d_psf_.data(), psf.image.width,
                                                               psf.image.height, psf.peak_x, psf.peak_y, width, height);
    if (!streamed()) spectra_.push_back(spectrum);
    if (p == 0) first_spectrum = spectrum;
  });
  conv_ = std::make_unique<FftConvolverGpu>(resources.plans(), s_, first_spectrum);
  if (streamed()) {
    for (const CleanPlane& plane : planes.planes) host_residuals_.push_back(*plane.dirty);
    host_models_.assign(np, HostImage(width, height));
  } else {
    for (std::size_t p = 0; p < np; ++p)
      cuda::upload(resources.staging(), s_, residual(p), planes.planes[p].dirty->pixels.data(), n_);
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(models_.data(), 0, np * n_ * sizeof(float), s_));
  }
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s_));  // the host copies above are pageable and local
}

std::size_t JoinedPlanesGpu::bytes_needed(std::size_t planes, std::size_t block, std::size_t width,
                                          std::size_t height, std::size_t psf_width, std::size_t psf_height,
                                          const std::vector<std::size_t>& patches, std::size_t max_members,
                                          std::size_t max_components) {
  const std::size_t n = width * height, f = sizeof(float);
  const std::size_t on_device = block > 0 ? std::min(block, planes) : planes;
  const std::size_t spectrum =
      FftConvolverGpu::spectrum_bytes(psf_width, psf_height, psf_width / 2, psf_height / 2, width, height);
  std::size_t bytes = on_device * 3 * n * f;                // residuals, models, deltas
  bytes += (on_device == planes ? planes : 2) * spectrum;   // the PSF spectra (streamed: one, and the next)
  bytes += FftConvolverGpu::bytes_needed(psf_width, psf_height, psf_width / 2, psf_height / 2, width, height) -
           spectrum;                                        // the shared convolver's buffer and work area
  bytes += 3 * psf_width * psf_height * f;                  // the PSF as uploaded, its once and twice convolved
  return bytes + JoinedMinorInputs::bytes_needed(planes, patches, max_members, max_components);
}

void JoinedPlanesGpu::bring(std::size_t first, std::size_t count, bool models) {
  for (std::size_t p = first; p < first + count; ++p) {
    cuda::upload(resources_.staging(), s_, residual(p), host_residuals_[p].pixels.data(), n_);
    if (models) cuda::upload(resources_.staging(), s_, model(p), host_models_[p].pixels.data(), n_);
  }
}

void JoinedPlanesGpu::put_back(std::size_t first, std::size_t count, bool models) {
  for (std::size_t p = first; p < first + count; ++p) {
    cuda::download(resources_.staging(), s_, host_residuals_[p].pixels.data(), residual(p), n_);
    if (models) cuda::download(resources_.staging(), s_, host_models_[p].pixels.data(), model(p), n_);
  }
}

FftConvolverGpu& JoinedPlanesGpu::psf_conv(std::size_t p) {
  if (!streamed()) {
    conv_->set_spectrum(spectra_[p]);
    return *conv_;
  }
  const PreparedPsf& psf = *planes_.planes[p].psf;
  cuda::upload(resources_.staging(), s_, d_psf_.data(), psf.image.pixels.data(), psf.image.size());
  conv_->set_spectrum(kernel_spectrum(resources_.plans(), s_, s_, d_psf_.data(), psf.image.width, psf.image.height,
                                      psf.peak_x, psf.peak_y, width_, height_));
  return *conv_;
}

void JoinedPlanesGpu::gather(std::size_t scale, ScaleImagesGpu& scale_images, const std::uint32_t* pixels,
                             std::uint32_t count) {
  const std::size_t np = planes_.planes.size();
  const bool delta_scale = scale_images.is_delta(scale);
  for (std::size_t first = 0; first < np; first += block_) {
    const std::size_t count_b = std::min(block_, np - first);
    if (streamed()) bring(first, count_b, false);
    for (std::size_t p = first; p < first + count_b; ++p) {
      const float* image = residual(p);
      if (!delta_scale) {  // the delta buffer is free until subtract() zeroes it
        scale_images.convolve_into(scale, image, delta(p));
        image = delta(p);
      }
      gather_plane(s_, image, pixels, count, static_cast<int>(np), static_cast<int>(p), inputs_->member_values());
    }
  }
}

void JoinedPlanesGpu::subtract(std::size_t scale, ScaleImagesGpu& scale_images, const MinorCycleEngine& engine,
                               std::size_t first, GpuImageState& st) {
  const std::size_t np = planes_.planes.size();
  const bool delta_scale = scale_images.is_delta(scale), pol = planes_.join == Join::kPolarizations;
  for (std::size_t f = 0; f < np; f += block_) {
    const std::size_t count = std::min(block_, np - f);
    if (streamed()) bring(f, count, true);
    for (std::size_t p = f; p < f + count; ++p) {
      GPUCLEAN_CUDA_TRY(cudaMemsetAsync(delta(p), 0, n_ * sizeof(float), s_));
      engine.sum_last_cycle(inputs_->comp_fluxes(p, first), delta(p),
                            delta_scale ? model(p) : nullptr);
      if (!delta_scale) scale_images.spread(scale, delta(p), model(p));
      FftConvolverGpu& conv = psf_conv(p);
      conv.convolve(delta(p));
      // The delta is spent once convolved: its buffer takes the masked copy nobody reads.
      conv.subtract_from(residual(p), st.mask(), delta(p));
    }
    accumulate_planes(s_, residual(f), static_cast<int>(count), n_, pol, inputs_->iweights() + f, f == 0, st.residual());
    if (streamed()) put_back(f, count, true);
  }
  finish_integration(s_, st.residual(), n_, pol, st.mask(), st.residual(), st.masked());
}

void JoinedPlanesGpu::set_residuals(const std::vector<const float*>& planes, GpuImageState& st) {
  const std::size_t np = planes_.planes.size();
  if (planes.size() != np)
    throw InvalidInput("a residual for " + std::to_string(np) + " joined planes came with " +
                       std::to_string(planes.size()) + "; give one per plane.");
  const bool pol = planes_.join == Join::kPolarizations;
  for (std::size_t f = 0; f < np; f += block_) {
    const std::size_t count = std::min(block_, np - f);
    for (std::size_t p = f; p < f + count; ++p) {
      if (streamed()) std::copy(planes[p], planes[p] + n_, host_residuals_[p].pixels.begin());
      cuda::upload(resources_.staging(), s_, residual(p), planes[p], n_);
    }
    accumulate_planes(s_, residual(f), static_cast<int>(count), n_, pol, inputs_->iweights() + f, f == 0, st.residual());
  }
  finish_integration(s_, st.residual(), n_, pol, st.mask(), st.residual(), st.masked());
  st.residual_changed();
}

std::vector<HostImage> JoinedPlanesGpu::model_images() { return images(true); }
std::vector<HostImage> JoinedPlanesGpu::residual_images() { return images(false); }

std::vector<HostImage> JoinedPlanesGpu::images(bool models) {
  std::vector<HostImage> out;
  for (std::size_t p = 0; p < planes_.planes.size(); ++p) {
    if (streamed()) {  // between major cycles the host copies are the planes
      out.push_back(models ? host_models_[p] : host_residuals_[p]);
      continue;
    }
    out.emplace_back(width_, height_);
    cuda::download(resources_.staging(), s_, out.back().pixels.data(), models ? model(p) : residual(p), n_);
  }
  return out;
}

void JoinedPlanesGpu::finish(const PixelGaussian* beam, CleanResult& result) {
  const std::size_t np = planes_.planes.size();
  // Restored planes go into the delta buffers, free now.
  PlaneRestorer restorer(resources_, s_, width_, height_);
  result.images.planes.resize(np);
  for (std::size_t f = 0; f < np; f += block_) {
    const std::size_t count_b = std::min(block_, np - f);
    if (streamed()) bring(f, count_b, true);
    for (std::size_t p = f; p < f + count_b; ++p) {
      const PixelGaussian* b = planes_.planes[p].restoring_beam ? planes_.planes[p].restoring_beam : beam;
      restorer.restore(b, model(p), residual(p), delta(p), result.images.planes[p]);
    }
  }
  inputs_->finish(result.stop.iterations, result);
}

}  // namespace gpuclean::clean::gpu

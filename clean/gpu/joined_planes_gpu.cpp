#include "clean/gpu/joined_planes_gpu.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "clean/errors.hpp"
#include "clean/gpu/joined_kernels.hpp"
#include "clean/gpu/scale_set_gpu.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/pinned_staging.hpp"

namespace gpuclean::clean::gpu {
namespace {

void upload(cudaStream_t s, float* dst, const float* src, std::size_t count) {
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(dst, src, count * sizeof(float), cudaMemcpyHostToDevice, s));
}

// Plane p's minor-cycle window into the (2 hw + 1)^2 x planes patch, offset-major (a member's
// planes together), 0 where the patch leaves the window (ClarkGpu's beam patch; the CPU
// reference skips those offsets, which subtracts the same).
void place_patch(const PreparedPsf& window, std::size_t half_width, std::size_t plane, std::size_t planes,
                 std::vector<float>& out) {
  const auto hw = static_cast<std::ptrdiff_t>(half_width), side = 2 * hw + 1;
  for (std::ptrdiff_t dy = -hw; dy <= hw; ++dy) {
    for (std::ptrdiff_t dx = -hw; dx <= hw; ++dx) {
      const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(window.peak_x) + dx;
      const std::ptrdiff_t py = static_cast<std::ptrdiff_t>(window.peak_y) + dy;
      const bool inside = px >= 0 && py >= 0 && px < static_cast<std::ptrdiff_t>(window.image.width) &&
                          py < static_cast<std::ptrdiff_t>(window.image.height);
      const auto at = static_cast<std::size_t>((dy + hw) * side + dx + hw);
      out[at * planes + plane] =
          inside ? window.image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py)) : 0.0f;
    }
  }
}

std::size_t side_of(std::size_t half_width) { return 2 * half_width + 1; }

}  // namespace

JoinedPlanesGpu::JoinedPlanesGpu(GpuResources& resources, const JoinedPlanes& planes,
                                 const std::vector<CleanScale>& scales, std::size_t width, std::size_t height,
                                 std::size_t max_members)
    : resources_(resources),
      s_(resources.stream()),
      planes_(planes),
      width_(width),
      height_(height),
      n_(width * height),
      block_(planes.device_planes > 0 ? std::min(planes.device_planes, planes.planes.size()) : planes.planes.size()),
      fit_(spectral_fit_of(planes)),
      sidelobes_(scales.size(), 0.0f) {
  const std::size_t np = planes.planes.size();
  residuals_ = cuda::DeviceBuffer<float>(block_ * n_, s_);
  models_ = cuda::DeviceBuffer<float>(block_ * n_, s_);
  deltas_ = cuda::DeviceBuffer<float>(block_ * n_, s_);
  member_values_ = cuda::DeviceBuffer<float>(std::max<std::size_t>(max_members, 1) * np, s_);
  const std::vector<float> w = integration_weights(planes);
  iweights_ = cuda::DeviceBuffer<float>(np, s_);
  upload(s_, iweights_.data(), w.data(), np);
  if (fit_ && fit_->logarithmic()) {
    log_x_ = cuda::DeviceBuffer<double>(np, s_);
    log_w_ = cuda::DeviceBuffer<double>(np, s_);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(log_x_.data(), fit_->log_frequencies().data(), np * sizeof(double),
                                      cudaMemcpyHostToDevice, s_));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(log_w_.data(), fit_->log_weights().data(), np * sizeof(double),
                                      cudaMemcpyHostToDevice, s_));
  } else if (fit_) {
    projection_ = cuda::DeviceBuffer<float>(np * np, s_);
    upload(s_, projection_.data(), fit_->projection().data(), np * np);
  }

  // Every plane's PSF once: its spectrum (kept when resident) and every scale's minor-cycle
  // window, each divided by the integrated PSF's scale peak (joined_planes_cpu.hpp).
  const PreparedPsf& psf0 = *planes.planes.front().psf;
  d_psf_ = cuda::DeviceBuffer<float>(psf0.image.size(), s_);
  ScaleMinorPsfsGpu minor_psfs(resources, scales, psf0.image.width, psf0.image.height);
  std::vector<float> divisors;
  std::vector<std::vector<float>> h_patches;
  for (const CleanScale& sc : scales) {
    divisors.push_back(sc.psf_peak);
    h_patches.emplace_back(side_of(sc.patch) * side_of(sc.patch) * np, 0.0f);
  }
  std::shared_ptr<const Spectrum> first_spectrum;
  for (std::size_t p = 0; p < np; ++p) {
    const PreparedPsf& psf = *planes.planes[p].psf;
    cuda::upload(resources.staging(), s_, d_psf_.data(), psf.image.pixels.data(), psf.image.size());
    std::shared_ptr<const Spectrum> spectrum;
    if (!streamed() || p == 0)
      spectrum = kernel_spectrum(resources.plans(), s_, s_, d_psf_.data(), psf.image.width, psf.image.height,
                                 psf.peak_x, psf.peak_y, width, height);
    if (!streamed()) spectra_.push_back(spectrum);
    if (p == 0) first_spectrum = spectrum;
    // compute() waits for the stream, so the next upload cannot overtake this plane's transform.
    const std::vector<ScaleMinorPsf> m = minor_psfs.compute(psf, d_psf_.data(), divisors);
    for (std::size_t b = 0; b < scales.size(); ++b) {
      sidelobes_[b] = std::max(sidelobes_[b], m[b].sidelobe);
      place_patch(m[b].window, scales[b].patch, p, np, h_patches[b]);
    }
  }
  for (const std::vector<float>& h : h_patches) {
    patches_.emplace_back(h.size(), s_);
    upload(s_, patches_.back().data(), h.data(), h.size());
  }
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
  for (std::size_t hw : patches) bytes += side_of(hw) * side_of(hw) * planes * f;
  bytes += max_members * planes * f * 2;                    // the members' values, and the engine's copy
  // The components' plane fluxes, and the engine's records of them (up to eight per component).
  bytes += std::min<std::size_t>(max_components, std::size_t{1} << 24) * planes * f * 9;
  return bytes + planes * (planes + 2) * f;
}

void JoinedPlanesGpu::reserve_components(std::size_t used, std::size_t more) {
  if (used + more <= comp_capacity_) return;
  const std::size_t cap = std::max(used + more, 2 * comp_capacity_), np = planes_.planes.size();
  cuda::DeviceBuffer<float> grown(cap * np, s_);
  if (used > 0)
    GPUCLEAN_CUDA_TRY(cudaMemcpy2DAsync(grown.data(), cap * sizeof(float), comp_fluxes_.data(),
                                        comp_capacity_ * sizeof(float), used * sizeof(float), np,
                                        cudaMemcpyDeviceToDevice, s_));
  comp_fluxes_ = std::move(grown);
  comp_capacity_ = cap;
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
      gather_plane(s_, image, pixels, count, static_cast<int>(np), static_cast<int>(p), member_values_.data());
    }
  }
}

JoinedMinorRequest JoinedPlanesGpu::request(std::size_t scale, std::size_t first) {
  JoinedMinorRequest j;
  j.planes = planes();
  j.polarizations = planes_.join == Join::kPolarizations;
  j.member_values = member_values_.data();
  j.patches = patches_[scale].data();
  j.iweights = iweights_.data();
  const bool logarithmic = fit_ && fit_->logarithmic();
  j.projection = fit_ && !logarithmic ? projection_.data() : nullptr;
  j.log_x = logarithmic ? log_x_.data() : nullptr;
  j.log_w = logarithmic ? log_w_.data() : nullptr;
  j.log_terms = logarithmic ? static_cast<int>(fit_->terms()) : 0;
  j.comp_plane_fluxes = comp_fluxes_.data() + first;
  j.comp_stride = comp_capacity_;
  return j;
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
      engine.sum_last_cycle(comp_fluxes_.data() + p * comp_capacity_ + first, delta(p),
                            delta_scale ? model(p) : nullptr);
      if (!delta_scale) scale_images.spread(scale, delta(p), model(p));
      FftConvolverGpu& conv = psf_conv(p);
      conv.convolve(delta(p));
      // The delta is spent once convolved: its buffer takes the masked copy nobody reads.
      conv.subtract_from(residual(p), st.mask(), delta(p));
    }
    accumulate_planes(s_, residual(f), static_cast<int>(count), n_, pol, iweights_.data() + f, f == 0, st.residual());
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
    accumulate_planes(s_, residual(f), static_cast<int>(count), n_, pol, iweights_.data() + f, f == 0, st.residual());
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
  const std::size_t np = planes_.planes.size(), count = result.stop.iterations;
  // One convolver per restoring layout (every ordinary beam of these images shares one), its
  // spectrum set per plane; restored planes go into the delta buffers, free now.
  std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<FftConvolverGpu>> restorers;
  std::map<const PixelGaussian*, std::shared_ptr<const Spectrum>> beams;
  result.images.planes.resize(np);
  for (std::size_t f = 0; f < np; f += block_) {
    const std::size_t count_b = std::min(block_, np - f);
    if (streamed()) bring(f, count_b, true);
    for (std::size_t p = f; p < f + count_b; ++p) {
      PlaneImages& out = result.images.planes[p];
      out.model = HostImage(width_, height_);
      out.residual = HostImage(width_, height_);
      cuda::download(resources_.staging(), s_, out.model.pixels.data(), model(p), n_);
      cuda::download(resources_.staging(), s_, out.residual.pixels.data(), residual(p), n_);
      const PixelGaussian* b = planes_.planes[p].restoring_beam ? planes_.planes[p].restoring_beam : beam;
      if (!b) continue;
      std::shared_ptr<const Spectrum>& spectrum = beams[b];
      if (!spectrum) spectrum = gaussian_spectrum(resources_.plans(), s_, *b, width_, height_);
      auto& conv = restorers[{spectrum->layout().pw, spectrum->layout().ph}];
      if (!conv) conv = std::make_unique<FftConvolverGpu>(resources_.plans(), s_, spectrum);
      else conv->set_spectrum(spectrum);
      conv->convolve(model(p));
      conv->add_to(residual(p), delta(p));
      out.restored = HostImage(width_, height_);
      cuda::download(resources_.staging(), s_, out.restored.pixels.data(), delta(p), n_);
    }
  }
  std::vector<float> by_plane(np * count);
  if (count > 0)
    GPUCLEAN_CUDA_TRY(cudaMemcpy2DAsync(by_plane.data(), count * sizeof(float), comp_fluxes_.data(),
                                        comp_capacity_ * sizeof(float), count * sizeof(float), np,
                                        cudaMemcpyDeviceToHost, s_));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s_));
  result.components.plane_fluxes.resize(np * count);
  for (std::size_t p = 0; p < np; ++p)
    for (std::size_t k = 0; k < count; ++k) result.components.plane_fluxes[k * np + p] = by_plane[p * count + k];
  result.components.reference_frequency_hz = reference_frequency(planes_);
  if (fit_) result.components.spectral_terms = component_terms(*fit_, result.components.plane_fluxes);
}

}  // namespace gpuclean::clean::gpu

#include "clean/gpu/joined_common_gpu.hpp"

#include <algorithm>

#include "clean/gpu/scale_set_gpu.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/pinned_staging.hpp"

namespace gpuclean::clean::gpu {
namespace {

void upload(cudaStream_t s, float* dst, const float* src, std::size_t count) {
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(dst, src, count * sizeof(float), cudaMemcpyHostToDevice, s));
}

std::size_t side_of(std::size_t half_width) { return 2 * half_width + 1; }

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

}  // namespace

JoinedMinorInputs::JoinedMinorInputs(GpuResources& resources, const JoinedPlanes& planes,
                                     const std::vector<CleanScale>& scales, std::size_t max_members, float* d_psf,
                                     const std::function<void(std::size_t)>& each_psf)
    : s_(resources.stream()), planes_(planes), fit_(spectral_fit_of(planes)), sidelobes_(scales.size(), 0.0f) {
  const std::size_t np = planes.planes.size();
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

  // Every plane's PSF once: every scale's minor-cycle window, each divided by the integrated
  // PSF's scale peak (joined_planes_cpu.hpp).
  const PreparedPsf& psf0 = *planes.planes.front().psf;
  ScaleMinorPsfsGpu minor_psfs(resources, scales, psf0.image.width, psf0.image.height);
  std::vector<float> divisors;
  std::vector<std::vector<float>> h_patches;
  for (const CleanScale& sc : scales) {
    divisors.push_back(sc.psf_peak);
    h_patches.emplace_back(side_of(sc.patch) * side_of(sc.patch) * np, 0.0f);
  }
  for (std::size_t p = 0; p < np; ++p) {
    const PreparedPsf& psf = *planes.planes[p].psf;
    cuda::upload(resources.staging(), s_, d_psf, psf.image.pixels.data(), psf.image.size());
    if (each_psf) each_psf(p);
    // compute() waits for the stream, so the next upload cannot overtake this plane's use of d_psf.
    const std::vector<ScaleMinorPsf> m = minor_psfs.compute(psf, d_psf, divisors);
    for (std::size_t b = 0; b < scales.size(); ++b) {
      sidelobes_[b] = std::max(sidelobes_[b], m[b].sidelobe);
      place_patch(m[b].window, scales[b].patch, p, np, h_patches[b]);
    }
  }
  for (const std::vector<float>& h : h_patches) {
    patches_.emplace_back(h.size(), s_);
    upload(s_, patches_.back().data(), h.data(), h.size());
  }
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s_));  // the host copies above are pageable and local
}

std::size_t JoinedMinorInputs::bytes_needed(std::size_t planes, const std::vector<std::size_t>& patches,
                                            std::size_t max_members, std::size_t max_components) {
  const std::size_t f = sizeof(float);
  std::size_t bytes = 0;
  for (std::size_t hw : patches) bytes += side_of(hw) * side_of(hw) * planes * f;
  bytes += max_members * planes * f * 2;  // the members' values, and the engine's copy
  // The components' plane fluxes, and the engine's records of them (up to eight per component).
  bytes += std::min<std::size_t>(max_components, std::size_t{1} << 24) * planes * f * 9;
  return bytes + planes * (planes + 2) * f;
}

void JoinedMinorInputs::reserve_components(std::size_t used, std::size_t more) {
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

JoinedMinorRequest JoinedMinorInputs::request(std::size_t scale, std::size_t first) {
  JoinedMinorRequest j;
  j.planes = static_cast<int>(planes_.planes.size());
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

void JoinedMinorInputs::finish(std::size_t count, CleanResult& result) {
  const std::size_t np = planes_.planes.size();
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

void PlaneRestorer::restore(const PixelGaussian* beam, float* model, const float* residual, float* scratch,
                            PlaneImages& out) {
  const std::size_t n = width_ * height_;
  out.model = HostImage(width_, height_);
  out.residual = HostImage(width_, height_);
  cuda::download(resources_.staging(), s_, out.model.pixels.data(), model, n);
  cuda::download(resources_.staging(), s_, out.residual.pixels.data(), residual, n);
  if (!beam) return;
  std::shared_ptr<const Spectrum>& spectrum = beams_[beam];
  if (!spectrum) spectrum = gaussian_spectrum(resources_.plans(), s_, *beam, width_, height_);
  auto& conv = restorers_[{spectrum->layout().pw, spectrum->layout().ph}];
  if (!conv) conv = std::make_unique<FftConvolverGpu>(resources_.plans(), s_, spectrum);
  else conv->set_spectrum(spectrum);
  conv->convolve(model);
  conv->add_to(residual, scratch);
  out.restored = HostImage(width_, height_);
  cuda::download(resources_.staging(), s_, out.restored.pixels.data(), scratch, n);
}

}  // namespace gpuclean::clean::gpu

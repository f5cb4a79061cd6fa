#include "clean/gpu/joined_planes_gpu.hpp"

#include <algorithm>
#include <map>

#include "clean/gpu/joined_kernels.hpp"
#include "clean/scale_set.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::clean::gpu {
namespace {

void upload(cudaStream_t s, float* dst, const float* src, std::size_t count) {
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(dst, src, count * sizeof(float), cudaMemcpyHostToDevice, s));
}

// The (2 hw + 1)^2 PSF values around the peak, 0 where the patch leaves the PSF (as ClarkGpu's
// beam patch; the CPU reference skips those offsets, which subtracts the same).
void append_patch(const PreparedPsf& psf, std::size_t half_width, std::vector<float>& out) {
  const auto hw = static_cast<std::ptrdiff_t>(half_width);
  for (std::ptrdiff_t dy = -hw; dy <= hw; ++dy) {
    for (std::ptrdiff_t dx = -hw; dx <= hw; ++dx) {
      const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(psf.peak_x) + dx;
      const std::ptrdiff_t py = static_cast<std::ptrdiff_t>(psf.peak_y) + dy;
      const bool inside = px >= 0 && py >= 0 && px < static_cast<std::ptrdiff_t>(psf.image.width) &&
                          py < static_cast<std::ptrdiff_t>(psf.image.height);
      out.push_back(inside ? psf.image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py)) : 0.0f);
    }
  }
}

}  // namespace

JoinedPlanesGpu::JoinedPlanesGpu(GpuResources& resources, const JoinedPlanes& planes, std::size_t patch,
                                 std::size_t width, std::size_t height)
    : resources_(resources),
      s_(resources.stream()),
      planes_(planes),
      width_(width),
      height_(height),
      n_(width * height),
      fit_(spectral_fit_of(planes)) {
  const std::size_t np = planes.planes.size();
  residuals_ = cuda::DeviceBuffer<float>(np * n_, s_);
  models_ = cuda::DeviceBuffer<float>(np * n_, s_);
  deltas_ = cuda::DeviceBuffer<float>(np * n_, s_);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(models_.data(), 0, np * n_ * sizeof(float), s_));
  std::vector<float> h_patches;
  const PreparedPsf& first = *planes.planes.front().psf;
  cuda::DeviceBuffer<float> d_psf(first.image.size(), s_);
  for (std::size_t p = 0; p < np; ++p) {
    const CleanPlane& plane = planes.planes[p];
    upload(s_, residuals_.data() + p * n_, plane.dirty->pixels.data(), n_);
    append_patch(*plane.psf, patch, h_patches);
    sidelobe_ = std::max(sidelobe_, std::min(largest_exterior_sidelobe(*plane.psf, patch), 1.0f));
    upload(s_, d_psf.data(), plane.psf->image.pixels.data(), plane.psf->image.size());
    conv_.push_back(std::make_unique<FftConvolverGpu>(resources.plans(), s_, d_psf.data(), plane.psf->image.width,
                                                      plane.psf->image.height, plane.psf->peak_x,
                                                      plane.psf->peak_y, width, height));
    // The spectrum is made from d_psf in stream order; the next upload follows it.
  }
  patches_ = cuda::DeviceBuffer<float>(h_patches.size(), s_);
  upload(s_, patches_.data(), h_patches.data(), h_patches.size());
  const std::vector<float> w = integration_weights(planes);
  iweights_ = cuda::DeviceBuffer<float>(np, s_);
  upload(s_, iweights_.data(), w.data(), np);
  if (fit_) {
    projection_ = cuda::DeviceBuffer<float>(np * np, s_);
    upload(s_, projection_.data(), fit_->projection().data(), np * np);
  }
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s_));  // the host copies above are pageable and local
}

std::size_t JoinedPlanesGpu::bytes_needed(std::size_t planes, std::size_t width, std::size_t height,
                                          std::size_t psf_width, std::size_t psf_height, std::size_t patch) {
  const std::size_t n = width * height, side = 2 * patch + 1;
  const std::size_t conv = FftConvolverGpu::bytes_needed(psf_width, psf_height, psf_width / 2, psf_height / 2,
                                                         width, height);
  return planes * (3 * n * sizeof(float) + conv + side * side * sizeof(float) + planes * sizeof(float)) + psf_width *
         psf_height * sizeof(float);
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

JoinedMinorRequest JoinedPlanesGpu::request(std::size_t first) {
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(deltas_.data(), 0, deltas_.size() * sizeof(float), s_));
  JoinedMinorRequest j;
  j.planes = planes();
  j.polarizations = planes_.join == Join::kPolarizations;
  j.residuals = residuals_.data();
  j.plane_pixels = n_;
  j.patches = patches_.data();
  j.iweights = iweights_.data();
  j.projection = fit_ ? projection_.data() : nullptr;
  j.comp_plane_fluxes = comp_fluxes_.data() + first;
  j.comp_stride = comp_capacity_;
  j.deltas = deltas_.data();
  j.models = models_.data();
  return j;
}

void JoinedPlanesGpu::subtract(GpuImageState& st) {
  for (std::size_t p = 0; p < conv_.size(); ++p) {
    conv_[p]->convolve(deltas_.data() + p * n_);
    // The delta is spent once convolved: its buffer takes the masked copy nobody reads.
    conv_[p]->subtract_from(residuals_.data() + p * n_, st.mask(), deltas_.data() + p * n_);
  }
  integrate_planes(s_, residuals_.data(), planes(), n_, planes_.join == Join::kPolarizations, iweights_.data(),
                   st.mask(), st.residual(), st.masked());
}

void JoinedPlanesGpu::finish(const PixelGaussian* beam, CleanResult& result) {
  const std::size_t np = planes_.planes.size(), count = result.iterations;
  // Restored planes go into the delta buffers, free now; one beam spectrum per distinct beam.
  std::map<const PixelGaussian*, std::unique_ptr<FftConvolverGpu>> restorers;
  std::vector<bool> restored(np, false);
  for (std::size_t p = 0; p < np; ++p) {
    const PixelGaussian* b = planes_.planes[p].restoring_beam ? planes_.planes[p].restoring_beam : beam;
    if (!b) continue;
    auto& conv = restorers[b];
    if (!conv)
      conv = std::make_unique<FftConvolverGpu>(resources_.plans(), s_,
                                               gaussian_spectrum(resources_.plans(), s_, *b, width_, height_));
    conv->convolve(models_.data() + p * n_);
    conv->add_to(residuals_.data() + p * n_, deltas_.data() + p * n_);
    restored[p] = true;
  }
  result.planes.resize(np);
  auto download = [&](const float* src, HostImage& dst) {
    dst = HostImage(width_, height_);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(dst.pixels.data(), src, n_ * sizeof(float), cudaMemcpyDeviceToHost, s_));
  };
  for (std::size_t p = 0; p < np; ++p) {
    download(models_.data() + p * n_, result.planes[p].model);
    download(residuals_.data() + p * n_, result.planes[p].residual);
    if (restored[p]) download(deltas_.data() + p * n_, result.planes[p].restored);
  }
  std::vector<float> by_plane(np * count);
  if (count > 0)
    GPUCLEAN_CUDA_TRY(cudaMemcpy2DAsync(by_plane.data(), count * sizeof(float), comp_fluxes_.data(),
                                        comp_capacity_ * sizeof(float), count * sizeof(float), np,
                                        cudaMemcpyDeviceToHost, s_));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s_));
  result.plane_fluxes.resize(np * count);
  for (std::size_t p = 0; p < np; ++p)
    for (std::size_t k = 0; k < count; ++k) result.plane_fluxes[k * np + p] = by_plane[p * count + k];
  result.reference_frequency_hz = reference_frequency(planes_);
  if (fit_) result.spectral_terms = component_terms(*fit_, result.plane_fluxes);
}

}  // namespace gpuclean::clean::gpu

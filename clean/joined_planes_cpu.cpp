#include "clean/joined_planes_cpu.hpp"

#include <algorithm>

#include "clean/restore.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean {

JoinedPlanesCpu::JoinedPlanesCpu(const JoinedPlanes& planes, std::size_t patch, int threads)
    : planes_(planes),
      width_(planes.planes.front().dirty->width),
      height_(planes.planes.front().dirty->height),
      threads_(threads),
      fit_(spectral_fit_of(planes)) {
  const std::size_t np = planes.planes.size();
  windows_.reserve(np);
  for (const CleanPlane& p : planes.planes) {
    windows_.push_back(psf_window(p.psf->image, p.psf->peak_x, p.psf->peak_y, patch, 1.0f));
    sidelobe_ = std::max(sidelobe_, std::min(largest_exterior_sidelobe(*p.psf, patch), 1.0f));
    residuals_.push_back(*p.dirty);
    models_.emplace_back(width_, height_);
    conv_.push_back(std::make_unique<FftConvolverCpu>(p.psf->image, p.psf->peak_x, p.psf->peak_y, width_, height_,
                                                      threads));
  }
  minor_.join = planes.join;
  minor_.weights = integration_weights(planes);
  for (const PreparedPsf& w : windows_) minor_.psfs.push_back(&w);
  minor_.fit = fit_ ? &*fit_ : nullptr;
  delta_.assign(width_ * height_, 0.0f);
}

void JoinedPlanesCpu::gather(const std::vector<ActiveMember>& active, std::vector<float>& values) const {
  const std::size_t np = residuals_.size();
  values.resize(active.size() * np);
  for (std::size_t m = 0; m < active.size(); ++m) {
    const std::size_t i = static_cast<std::size_t>(active[m].y) * width_ + static_cast<std::size_t>(active[m].x);
    for (std::size_t p = 0; p < np; ++p) values[m * np + p] = residuals_[p].pixels[i];
  }
}

void JoinedPlanesCpu::subtract(const std::vector<Component>& components, std::size_t first,
                               const std::vector<float>& plane_fluxes, HostImage& residual, HostImage& model) {
  const std::size_t np = residuals_.size(), n = width_ * height_;
  for (std::size_t c = first; c < components.size(); ++c) {
    const std::size_t i = static_cast<std::size_t>(components[c].y) * width_ + components[c].x;
    model.pixels[i] += components[c].flux;
  }
  for (std::size_t p = 0; p < np; ++p) {
    std::fill(delta_.begin(), delta_.end(), 0.0f);
    for (std::size_t c = first; c < components.size(); ++c) {
      const std::size_t i = static_cast<std::size_t>(components[c].y) * width_ + components[c].x;
      delta_[i] += plane_fluxes[c * np + p];
    }
    for (std::size_t i = 0; i < n; ++i) models_[p].pixels[i] += delta_[i];
    conv_[p]->convolve(delta_.data(), delta_.data());
    for (std::size_t i = 0; i < n; ++i) residuals_[p].pixels[i] -= delta_[i];
  }
  std::vector<const HostImage*> images;
  for (const HostImage& r : residuals_) images.push_back(&r);
  residual = integrate_images(planes_.join, images, minor_.weights);
}

void JoinedPlanesCpu::finish(const PixelGaussian* beam, int threads, CleanResult& result) {
  result.planes.resize(residuals_.size());
  for (std::size_t p = 0; p < residuals_.size(); ++p) {
    PlaneImages& out = result.planes[p];
    out.model = std::move(models_[p]);
    out.residual = std::move(residuals_[p]);
    const PixelGaussian* b = planes_.planes[p].restoring_beam ? planes_.planes[p].restoring_beam : beam;
    if (b) out.restored = restore_cpu(out.model, out.residual, *b, threads);
  }
  result.reference_frequency_hz = reference_frequency(planes_);
  if (fit_) result.spectral_terms = component_terms(*fit_, result.plane_fluxes);
}

}  // namespace gpuclean::clean

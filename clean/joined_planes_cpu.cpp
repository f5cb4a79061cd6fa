#include "clean/joined_planes_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "clean/errors.hpp"
#include "clean/restore.hpp"

namespace gpuclean::clean {

JoinedPlanesCpu::JoinedPlanesCpu(const JoinedPlanes& planes, const std::vector<CleanScale>& scales, int threads)
    : planes_(planes),
      width_(planes.planes.front().dirty->width),
      height_(planes.planes.front().dirty->height),
      fit_(spectral_fit_of(planes)),
      weights_(integration_weights(planes)),
      windows_(scales.size()),
      minors_(scales.size()),
      sidelobes_(scales.size(), 0.0f) {
  for (std::size_t b = 0; b < scales.size(); ++b) {
    for (const CleanPlane& p : planes.planes) {
      ScaleMinorPsf m = scale_minor_psf(*p.psf, scales[b], scales[b].psf_peak, threads);
      sidelobes_[b] = std::max(sidelobes_[b], m.sidelobe);
      windows_[b].push_back(std::move(m.window));
    }
    JoinedMinor& j = minors_[b];
    j.join = planes.join;
    j.weights = weights_;
    for (const PreparedPsf& w : windows_[b]) j.psfs.push_back(&w);
    j.fit = fit_ ? &*fit_ : nullptr;
  }
  for (const CleanPlane& p : planes.planes) {
    residuals_.push_back(*p.dirty);
    models_.emplace_back(width_, height_);
    conv_.push_back(std::make_unique<FftConvolverCpu>(p.psf->image, p.psf->peak_x, p.psf->peak_y, width_, height_,
                                                      threads));
  }
  delta_.assign(width_ * height_, 0.0f);
}

void JoinedPlanesCpu::gather(std::size_t scale, ScaleImagesCpu& scale_images, const std::vector<ActiveMember>& active,
                             std::vector<float>& values) {
  const std::size_t np = residuals_.size(), n = width_ * height_;
  values.resize(active.size() * np);
  const bool delta_scale = scale_images.is_delta(scale);
  for (std::size_t p = 0; p < np; ++p) {
    const float* image = residuals_[p].pixels.data();
    if (!delta_scale) {  // the plane's residual (NaN as 0, as the scale images take it) (x) K
      scaled_.resize(n);
      for (std::size_t i = 0; i < n; ++i) scaled_[i] = std::isnan(image[i]) ? 0.0f : image[i];
      scale_images.convolve(scale, scaled_.data());
      image = scaled_.data();
    }
    for (std::size_t m = 0; m < active.size(); ++m)
      values[m * np + p] = image[static_cast<std::size_t>(active[m].y) * width_ + static_cast<std::size_t>(active[m].x)];
  }
}

void JoinedPlanesCpu::subtract(std::size_t scale, ScaleImagesCpu& scale_images,
                               const std::vector<Component>& components, std::size_t first,
                               const std::vector<float>& plane_fluxes, HostImage& residual) {
  const std::size_t np = residuals_.size(), n = width_ * height_;
  const bool delta_scale = scale_images.is_delta(scale);
  for (std::size_t p = 0; p < np; ++p) {
    std::fill(delta_.begin(), delta_.end(), 0.0f);
    for (std::size_t c = first; c < components.size(); ++c) {
      const std::size_t i = static_cast<std::size_t>(components[c].y) * width_ + components[c].x;
      delta_[i] += plane_fluxes[c * np + p];
    }
    if (!delta_scale) scale_images.convolve(scale, delta_.data());
    for (std::size_t i = 0; i < n; ++i) models_[p].pixels[i] += delta_[i];
    conv_[p]->convolve(delta_.data(), delta_.data());
    for (std::size_t i = 0; i < n; ++i) residuals_[p].pixels[i] -= delta_[i];
  }
  integrate(residual);
}

void JoinedPlanesCpu::set_residuals(const std::vector<const float*>& planes, HostImage& residual) {
  if (planes.size() != residuals_.size())
    throw InvalidInput("a residual for " + std::to_string(residuals_.size()) + " joined planes came with " +
                       std::to_string(planes.size()) + "; give one per plane.");
  for (std::size_t p = 0; p < planes.size(); ++p)
    std::copy(planes[p], planes[p] + residuals_[p].size(), residuals_[p].pixels.begin());
  integrate(residual);
}

void JoinedPlanesCpu::integrate(HostImage& residual) const {
  std::vector<const HostImage*> images;
  for (const HostImage& r : residuals_) images.push_back(&r);
  residual = integrate_images(planes_.join, images, weights_);
}

void JoinedPlanesCpu::finish(const PixelGaussian* beam, int threads, CleanResult& result) {
  result.images.planes.resize(residuals_.size());
  for (std::size_t p = 0; p < residuals_.size(); ++p) {
    PlaneImages& out = result.images.planes[p];
    out.model = std::move(models_[p]);
    out.residual = std::move(residuals_[p]);
    const PixelGaussian* b = planes_.planes[p].restoring_beam ? planes_.planes[p].restoring_beam : beam;
    if (b) out.restored = restore_cpu(out.model, out.residual, *b, threads);
  }
  result.components.reference_frequency_hz = reference_frequency(planes_);
  if (fit_) result.components.spectral_terms = component_terms(*fit_, result.components.plane_fluxes);
}

}  // namespace gpuclean::clean

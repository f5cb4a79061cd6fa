#include "clean/cpu_image_state.hpp"

#include <algorithm>

#include "clean/restore.hpp"

namespace gpuclean::clean {

CpuImageState::CpuImageState(const CleanProblem& problem, const CleanSettings& settings)
    : problem_(problem),
      settings_(settings),
      residual_(problem.dirty),
      model_(problem.dirty.width, problem.dirty.height),
      mask_(problem.mask) {}

double CpuImageState::robust_sigma() { return clean::robust_sigma(residual_.pixels); }
double CpuImageState::model_flux() { return total_flux(model_.pixels); }
Peak CpuImageState::peak() { return find_peak(residual_.pixels, mask_, settings_.allow_negative, settings_.threads); }

NoiseMapRange CpuImageState::make_noise_map(const LocalRmsSettings& local, double window_fwhm_pixels) {
  HostImage map = local_noise_map(residual_, local, window_fwhm_pixels, settings_.threads);
  rms_ = local_rms_weights(map, local.strength);
  if (problem_.keep_noise_map) noise_map_ = std::move(map);
  weighing_ = true;
  return {rms_.min_rms, rms_.max_rms};
}

std::vector<Component> CpuImageState::components(std::size_t count) {
  return {components_.begin(), components_.begin() + static_cast<std::ptrdiff_t>(count)};
}

PlaneSetCpu& CpuImageState::plan(std::vector<CleanScale>& scales) {
  planes_ = std::make_unique<PlaneSetCpu>(problem_, scales, residual_, settings_.threads);
  return *planes_;
}

// Without a plane set (an algorithm that never subtracts through the PSF), one plane.
void CpuImageState::set_residuals(const std::vector<const float*>& planes) {
  if (planes_) return planes_->set_residuals(planes);
  std::copy(only_plane(planes), only_plane(planes) + residual_.size(), residual_.pixels.begin());
}

std::vector<HostImage> CpuImageState::model_images() {
  return planes_ ? planes_->model_images(model_) : std::vector{model_};
}

std::vector<HostImage> CpuImageState::residual_images() {
  return planes_ ? planes_->residual_images() : std::vector{residual_};
}

void CpuImageState::finish(CleanResult& result) {
  result.images.residual = std::move(residual_);
  result.images.model = std::move(model_);
  result.components.list = std::move(components_);
  result.components.plane_fluxes = std::move(plane_fluxes_);
  if (problem_.keep_noise_map) result.images.noise_map = std::move(noise_map_);
  restore_if_asked(problem_, settings_.threads, result);
  if (planes_) planes_->finish(settings_.threads, result);
}

}  // namespace gpuclean::clean

#include "clean/plane_set_cpu.hpp"

#include <algorithm>
#include <chrono>

#include "clean/image_state.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

PlaneSetCpu::PlaneSetCpu(const CleanProblem& problem, std::vector<CleanScale>& scales, HostImage& residual,
                         int threads)
    : problem_(problem), residual_(residual) {
  if (problem.joined) {
    joined_.emplace(*problem.joined, scales, threads);
    for (std::size_t b = 0; b < scales.size(); ++b) scales[b].sidelobe = joined_->sidelobe(b);
  } else {  // a joined run subtracts through every plane's own PSF
    psf_conv_.emplace(problem.psf.image, problem.psf.peak_x, problem.psf.peak_y, residual.width, residual.height,
                      threads);
  }
}

std::size_t PlaneSetCpu::minor_cycle(MinorCycleCpu& minor, std::size_t scale, ScaleImagesCpu& scale_images,
                                     std::vector<ActiveMember>& active, double limit, double gain,
                                     bool allow_negative, std::size_t budget, std::vector<Component>& components,
                                     std::vector<float>& plane_fluxes) {
  if (!joined_) return minor.run(active, limit, gain, allow_negative, budget, &components);
  joined_->gather(scale, scale_images, active, plane_values_);
  return minor.run_joined(active, plane_values_, joined_->minor(scale), limit, gain, allow_negative, budget,
                          &components, &plane_fluxes);
}

void PlaneSetCpu::subtract(std::size_t scale, float psf_peak, ScaleImagesCpu& scale_images, std::size_t first,
                           std::vector<float>& delta, const std::vector<Component>& components,
                           std::vector<float>& plane_fluxes) {
  if (joined_) {  // every plane through its own PSF; the integrated residual remade from them
    const std::size_t np = problem_.joined->planes.size();
    for (std::size_t i = first * np; i < plane_fluxes.size(); ++i) plane_fluxes[i] /= psf_peak;
    joined_->subtract(scale, scale_images, components, first, plane_fluxes, residual_);
    return;
  }
  psf_conv_->convolve(delta.data(), delta.data());
  for (std::size_t i = 0; i < residual_.size(); ++i) residual_.pixels[i] -= delta[i];
}

void PlaneSetCpu::set_residuals(const std::vector<const float*>& planes) {
  if (joined_) return joined_->set_residuals(planes, residual_);
  std::copy(only_plane(planes), only_plane(planes) + residual_.size(), residual_.pixels.begin());
}

std::vector<HostImage> PlaneSetCpu::model_images(const HostImage& model) const {
  return joined_ ? joined_->models() : std::vector{model};
}

std::vector<HostImage> PlaneSetCpu::residual_images() const {
  return joined_ ? joined_->residuals() : std::vector{residual_};
}

void PlaneSetCpu::finish(int threads, CleanResult& result) {
  if (!joined_) return;
  const auto t = Clock::now();
  joined_->finish(problem_.restoring_beam, threads, result);
  result.diagnostics.seconds.restore += since(t);
}

}  // namespace gpuclean::clean

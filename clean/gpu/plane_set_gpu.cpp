#include "clean/gpu/plane_set_gpu.hpp"

#include <chrono>

#include "clean/image_state.hpp"

namespace gpuclean::clean::gpu {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

PlaneSetGpu::PlaneSetGpu(GpuResources& resources, GpuImageState& state, const CleanProblem& problem,
                         std::vector<CleanScale>& scales, std::size_t max_members)
    : st_(state), problem_(problem) {
  if (problem.joined) {
    joined_.emplace(resources, *problem.joined, scales, state.width(), state.height(), max_members);
    for (std::size_t b = 0; b < scales.size(); ++b) scales[b].sidelobe = joined_->sidelobe(b);
  } else {  // the full PSF only for its transform (cached across runs)
    conv_.emplace(resources.plans(), state.stream(), state.psf_spectrum());
  }
}

std::uint32_t PlaneSetGpu::minor_cycle(MinorCycleEngine& engine, const MinorCycleRequest& request, std::size_t scale,
                                       ScaleImagesGpu& scale_images, std::size_t first, std::size_t budget) {
  if (!joined_) return engine.run(request);
  joined_->reserve_components(first, budget);
  joined_->gather(scale, scale_images, request.pixels, request.count);
  return engine.run_joined(request, joined_->request(scale, first));
}

void PlaneSetGpu::subtract(std::size_t scale, ScaleImagesGpu& scale_images, const MinorCycleEngine& engine,
                           std::size_t first) {
  if (joined_) return joined_->subtract(scale, scale_images, engine, first, st_);
  conv_->convolve(st_.scratch());
  conv_->subtract_from(st_.residual(), st_.mask(), st_.masked());
}

void PlaneSetGpu::set_residuals(const std::vector<const float*>& planes) {
  if (joined_) return joined_->set_residuals(planes, st_);
  st_.set_residual(only_plane(planes));
}

std::vector<HostImage> PlaneSetGpu::model_images() {
  return joined_ ? joined_->model_images() : std::vector{st_.model_image()};
}

std::vector<HostImage> PlaneSetGpu::residual_images() {
  return joined_ ? joined_->residual_images() : std::vector{st_.residual_image()};
}

void PlaneSetGpu::finish(CleanResult& result) {
  if (!joined_) return;
  const auto t = Clock::now();
  joined_->finish(problem_.restoring_beam, result);
  result.diagnostics.seconds.restore += since(t);
}

}  // namespace gpuclean::clean::gpu

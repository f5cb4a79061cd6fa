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
  if (problem.joined && problem.joined->split_gpus.size() >= 2) {
    split_ = std::make_unique<JoinedSplitGpu>(resources, *problem.joined, scales, state.width(), state.height(),
                                              max_members);
  } else if (problem.joined) {
    joined_.emplace(resources, *problem.joined, scales, state.width(), state.height(), max_members);
  }
  if (problem.joined) {
    for (std::size_t b = 0; b < scales.size(); ++b)
      scales[b].sidelobe = joined([b](auto& j) { return j.sidelobe(b); });
  } else {  // the full PSF only for its transform (cached across runs)
    conv_.emplace(resources.plans(), state.stream(), state.psf_spectrum());
  }
}

std::uint32_t PlaneSetGpu::minor_cycle(MinorCycleEngine& engine, const MinorCycleRequest& request, std::size_t scale,
                                       ScaleImagesGpu& scale_images, std::size_t first, std::size_t budget) {
  if (!problem_.joined) return engine.run(request);
  return joined([&](auto& j) {
    j.reserve_components(first, budget);
    j.gather(scale, scale_images, request.pixels, request.count);
    return engine.run_joined(request, j.request(scale, first));
  });
}

void PlaneSetGpu::subtract(std::size_t scale, ScaleImagesGpu& scale_images, const MinorCycleEngine& engine,
                           std::size_t first) {
  if (problem_.joined) return joined([&](auto& j) { j.subtract(scale, scale_images, engine, first, st_); });
  conv_->convolve(st_.scratch());
  conv_->subtract_from(st_.residual(), st_.mask(), st_.masked());
}

void PlaneSetGpu::set_residuals(const std::vector<const float*>& planes) {
  if (problem_.joined) return joined([&](auto& j) { j.set_residuals(planes, st_); });
  st_.set_residual(only_plane(planes));
}

std::vector<HostImage> PlaneSetGpu::model_images() {
  if (problem_.joined) return joined([](auto& j) { return j.model_images(); });
  return std::vector{st_.model_image()};
}

std::vector<HostImage> PlaneSetGpu::residual_images() {
  if (problem_.joined) return joined([](auto& j) { return j.residual_images(); });
  return std::vector{st_.residual_image()};
}

void PlaneSetGpu::finish(CleanResult& result) {
  if (!problem_.joined) return;
  const auto t = Clock::now();
  joined([&](auto& j) { j.finish(problem_.restoring_beam, result); });
  result.diagnostics.seconds.restore += since(t);
}

}  // namespace gpuclean::clean::gpu

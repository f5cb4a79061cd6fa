#include "clean/gpu/hogbom_gpu.hpp"

#include <algorithm>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/minor_kernels.hpp"
#include "clean/scale_set.hpp"
#include "select/cuda/event.hpp"

namespace gpuclean::clean::gpu {
namespace {

constexpr std::size_t kMaxCycleComponents = 1u << 22;
// Launches queued between two looks at the stop flag: enough to hide the look, few enough that
// the launches queued after a stop (which return at once) cost little.
constexpr std::uint32_t kBatch = 256;

class HogbomStepsGpu final : public MajorCycleSteps {
 public:
  HogbomStepsGpu(GpuResources& resources, const CleanProblem& problem, const CleanSettings& settings)
      : resources_(resources),
        problem_(problem),
        settings_(settings),
        s_(resources.stream()),
        neg_(settings.allow_negative),
        st_(resources, problem, settings),
        scales_(plan_scales(settings, 0.0, problem.dirty.width, problem.dirty.height, 1)),
        psf_(problem.psf.image.size(), s_),
        slots_(3, s_),
        flags_(2, s_) {
    cuda::upload(resources.staging(), s_, psf_.data(), problem.psf.image.pixels.data(), problem.psf.image.size());
    st_.sample_memory();
  }

  ImageState& state() override { return st_; }
  const std::vector<CleanScale>& scales() const override { return scales_; }
  ScaleChoice choose() override {
    const Peak p = st_.peak();
    const float k = peak_key(p, neg_);
    return {p.index >= 0 ? 0 : -1, k, k, k};
  }
  float residual_peak() override { return peak_key(st_.peak(), neg_); }

  std::size_t minor_cycle(std::size_t, double limit, std::size_t budget_left) override {
    const auto budget = static_cast<std::uint32_t>(std::min(budget_left, kMaxCycleComponents));
    const std::size_t first = st_.component_count();
    st_.reserve_components(first, budget);
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(slots_.data(), 0, 3 * sizeof(unsigned long long), s_));
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(flags_.data(), 0, 2 * sizeof(std::uint32_t), s_));
    find_peak(s_, st_.masked(), st_.size(), neg_, slots_.data());

    const HostImage& psf = problem_.psf.image;
    HogbomStepArgs a;
    a.residual = st_.residual();
    a.masked = st_.masked();
    a.mask = st_.mask();
    a.width = st_.width();
    a.height = st_.height();
    a.psf = psf_.data();
    a.psf_width = psf.width;
    a.psf_height = psf.height;
    a.peak_x = problem_.psf.peak_x;
    a.peak_y = problem_.psf.peak_y;
    a.slots = slots_.data();
    a.limit = limit;
    a.gain = static_cast<float>(settings_.gain);
    a.abs_key = neg_;
    a.budget = budget;
    a.comp_pixels = st_.comp_pixels() + first;
    a.comp_fluxes = st_.comp_fluxes() + first;
    a.model = st_.model();
    a.stopped = flags_.data();
    a.made = flags_.data() + 1;
    std::uint32_t h_flags[2] = {0, 0};
    cuda::Event batch_done;
    for (std::uint32_t step = 0; step < budget;) {
      const std::uint32_t end = std::min(budget, step + kBatch);
      for (; step < end; ++step) hogbom_step(s_, a, step);
      // As the minor engine does: no download queued behind the batch (it would hold a copy
      // engine's queue for the batch's length, and other workers' downloads with it).
      batch_done.record(s_);
      batch_done.synchronize();
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(h_flags, flags_.data(), sizeof h_flags, cudaMemcpyDeviceToHost, s_));
      resources_.synchronize();
      if (h_flags[0]) break;
    }
    const std::size_t made = h_flags[0] ? h_flags[1] : budget;
    st_.add_components(made);
    return made;
  }
  void release(CleanResult&) override { psf_ = cuda::DeviceBuffer<float>(); }  // restoration needs the room

 private:
  GpuResources& resources_;
  const CleanProblem& problem_;
  const CleanSettings& settings_;
  const cudaStream_t s_;
  const bool neg_;
  GpuImageState st_;
  std::vector<CleanScale> scales_;
  cuda::DeviceBuffer<float> psf_;
  cuda::DeviceBuffer<unsigned long long> slots_;
  cuda::DeviceBuffer<std::uint32_t> flags_;  // stopped, made
};

}  // namespace

std::unique_ptr<MajorCycleSteps> make_hogbom_steps_gpu(GpuResources& resources, const CleanProblem& problem,
                                                       const CleanSettings& settings) {
  return std::make_unique<HogbomStepsGpu>(resources, problem, settings);
}

}  // namespace gpuclean::clean::gpu

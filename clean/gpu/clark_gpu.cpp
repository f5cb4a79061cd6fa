#include "clean/gpu/clark_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <optional>
#include <utility>
#include <vector>

#include "clean/errors.hpp"
#include "clean/scale_set.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/gpu/plane_set_gpu.hpp"
#include "clean/gpu/scale_images_gpu.hpp"
#include "clean/gpu/scale_set_gpu.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/select_comparison.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The setup's parts, each from the end of the one before (diagnostics.setup_parts).
struct SetupLaps {
  Clock::time_point last = Clock::now();
  std::vector<std::pair<std::string, double>> parts;
  void mark(const char* part) {
    const auto now = Clock::now();
    parts.emplace_back(part, std::chrono::duration<double>(now - last).count());
    last = now;
  }
};

// One minor cycle makes at most this many components; a longer cycle is split into major
// cycles (only with --mgain near 0 and a huge --niter).
constexpr std::size_t kMaxCycleComponents = 1u << 22;

// The beam patch: (2 hw + 1)^2 PSF values around the peak, 0 where the patch leaves the PSF
// (the CPU reference skips those offsets, which subtracts the same).
std::vector<float> beam_patch(const PreparedPsf& psf, std::size_t half_width) {
  const auto hw = static_cast<std::ptrdiff_t>(half_width), side = 2 * hw + 1;
  std::vector<float> patch(static_cast<std::size_t>(side * side), 0.0f);
  for (std::ptrdiff_t dy = -hw; dy <= hw; ++dy) {
    for (std::ptrdiff_t dx = -hw; dx <= hw; ++dx) {
      const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(psf.peak_x) + dx;
      const std::ptrdiff_t py = static_cast<std::ptrdiff_t>(psf.peak_y) + dy;
      if (px < 0 || py < 0 || px >= static_cast<std::ptrdiff_t>(psf.image.width) ||
          py >= static_cast<std::ptrdiff_t>(psf.image.height))
        continue;
      patch[static_cast<std::size_t>((dy + hw) * side + dx + hw)] =
          psf.image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
    }
  }
  return patch;
}

class ClarkStepsGpu final : public MajorCycleSteps {
 public:
  // Joined planes (the state's plane set): the peaks are searched on the integrated image (st_'s
  // residual), the minor and major cycles work on every plane, each through its own PSF (the
  // integrated PSF's transform is not needed).
  ClarkStepsGpu(gpu::GpuResources& resources, const CleanProblem& problem, const CleanSettings& settings)
      : t_start_(Clock::now()),
        plans_before_(plan_totals(resources)),
        resources_(resources),
        settings_(settings),
        s_(resources.stream()),
        neg_(settings.allow_negative),
        st_(resources, problem, settings, gpu::PsfOnDevice::kSpectrum),
        n_((laps_.mark("image_state"), st_.size())),
        // The scales (one delta function without --multiscale: plain Clark) and their beam patches.
        scales_(gpu::prepare_scales_gpu(resources, problem.psf, settings,
                                        scale_beam_pixels(problem, settings), st_.width(),
                                        st_.height(), st_.exterior_sidelobe())),
        k_max_((laps_.mark("scales"), std::min(settings.select_k, n_))),
        active_values_(k_max_, s_),
        sorted_values_(k_max_, s_),
        active_pixels_(k_max_, s_),
        sorted_pixels_(k_max_, s_),
        sort_bytes_(gpu::sort_by_pixel_temp_bytes(k_max_)),
        sort_temp_(std::max<std::size_t>(sort_bytes_, 1), s_),
        count_(1, s_) {
    laps_.mark("buffers");
    st_.plan(scales_, k_max_);
    laps_.mark("plane_set");
    for (const CleanScale& sc : scales_) {
      const std::vector<float> h_patch = beam_patch(sc.minor_psf, sc.patch);
      patches_.emplace_back(h_patch.size(), s_);
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(patches_.back().data(), h_patch.data(), h_patch.size() * sizeof(float),
                                        cudaMemcpyHostToDevice, s_));
    }
    laps_.mark("patches");
    scale_images_.emplace(resources, st_, scales_);
    st_.sample_memory();
    laps_.mark("scale_images");
    // Scales are smallest first, so the first patch is the narrowest (set_patch's rule).
    cycle_cap_ = std::min(settings.niter, kMaxCycleComponents);
    minor_.emplace(s_, st_.width(), st_.height(), patches_[0].data(), static_cast<int>(scales_[0].patch), k_max_,
                   cycle_cap_);
    if (problem.observer && problem.observer->compares_selection()) {
      observer_ = problem.observer;
      compare_.emplace(s_, settings, k_max_);
    }
    laps_.mark("minor_engine");
    setup_seconds_ = since(t_start_);
    // The worker's resources, made for its first run, count in that run's setup.
    const double made = std::exchange(resources.unreported_creation_seconds, 0.0);
    setup_seconds_ += made;
    const gpu::GpuImageState::SetupSeconds& in = st_.setup_seconds();
    const auto [plans_made, plan_seconds] = plan_totals(resources);
    // The parts in order; image_state's own parts (prefixed) are inside it; memory_queries
    // (cudaMemGetInfo) and fft_plans are inside the others.
    setup_parts_ = {{"resources", made}};
    setup_parts_.insert(setup_parts_.end(), laps_.parts.begin(), laps_.parts.end());
    setup_parts_.insert(setup_parts_.begin() + 2, {{"image_state.host_images", in.host_images},
                                                   {"image_state.psf_spectrum", in.psf},
                                                   {"image_state.allocations", in.allocations},
                                                   {"image_state.uploads", in.uploads}});
    setup_parts_.emplace_back("memory_queries", st_.memory_query_seconds());
    setup_parts_.emplace_back("fft_plans", plan_seconds - plans_before_.second);
    setup_parts_.emplace_back("fft_plans_made", static_cast<double>(plans_made - plans_before_.first));
  }

  ImageState& state() override { return st_; }
  const std::vector<CleanScale>& scales() const override { return scales_; }

  ScaleChoice choose() override {
    scale_images_->set_weights(st_.weights());
    choice_ = scale_images_->choose();
    return {choice_.scale, peak_key(choice_.peak, neg_), choice_.biased, choice_.unweighted};
  }
  float residual_peak() override { return peak_key(scale_images_->residual_peak(), neg_); }
  void residuals_replaced() override { scale_images_->forget_peak(); }

  void restrict(const std::vector<std::vector<std::uint8_t>>& masks) override { scale_images_->restrict(masks); }

  Selection select(const ScaleChoice&, double limit, std::size_t cycle) override {
    const auto order = neg_ ? select::Order::kLargestAbs : select::Order::kLargest;
    const float* masked = scale_images_->masked(choice_);
    Selection out;
    unsigned long long above = 0;
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(count_.data(), 0, sizeof above, s_));
    gpu::count_above(s_, masked, n_, neg_, static_cast<float>(limit), count_.data());
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&above, count_.data(), sizeof above, cudaMemcpyDeviceToHost, s_));
    resources_.synchronize();
    const std::size_t k = std::max<std::size_t>(1, std::min<std::size_t>(k_max_, above));
    const select::SelectStats sel = st_.selector().top_k(s_, masked, n_, {k, order, false}, st_.workspace(),
                                                         active_values_.data(), active_pixels_.data());
    out.count = sel.count;
    if (compare_) {  // not part of CLEAN's own selection time
      const auto t_compare = Clock::now();
      observer_->selection_compared(
          compare_->run(cycle, masked, n_, {k, order, false}, active_pixels_.data(), sel.count));
      out.untimed_seconds = since(t_compare);
    }
    gpu::sort_by_pixel(s_, sort_temp_.data(), sort_bytes_, active_pixels_.data(), sorted_pixels_.data(),
                       active_values_.data(), sorted_values_.data(), sel.count, n_);
    st_.sample_memory();
    resources_.synchronize();
    count_selected_ = sel.count;
    return out;
  }

  // Every independent cluster of the active set on its own SM or warp.
  std::size_t cycle_capacity() const override { return cycle_cap_; }
  std::size_t minor_cycle(std::size_t b, double limit, std::size_t budget_left) override {
    const CleanScale& scale = scales_[b];
    // An outer loop (WSClean's) may raise niter past the engine's size: the rest takes more cycles.
    const std::size_t budget = std::min(budget_left, cycle_cap_);
    const std::size_t first = st_.component_count();
    st_.reserve_components(first, budget);
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(st_.scratch(), 0, n_ * sizeof(float), s_));
    minor_->set_patch(patches_[b].data(), static_cast<int>(scale.patch));
    gpu::MinorCycleRequest req;
    req.values = sorted_values_.data();
    req.pixels = sorted_pixels_.data();
    req.count = static_cast<std::uint32_t>(count_selected_);
    req.limit = limit;
    req.gain = static_cast<float>(settings_.gain);
    req.abs_key = neg_;
    req.budget = static_cast<std::uint32_t>(budget);
    req.comp_pixels = st_.comp_pixels() + first;
    req.comp_fluxes = st_.comp_fluxes() + first;
    req.delta = st_.scratch();
    req.model = scale_images_->is_delta(b) ? st_.model() : nullptr;
    req.flux_divisor = scale.psf_peak;
    req.weights = st_.weights();
    const std::uint32_t made = st_.planes().minor_cycle(*minor_, req, b, *scale_images_, first, budget);
    st_.add_components(made);
    return made;
  }

  // The components (x) K into the model, and through the full PSF (every plane's own, when
  // joined) out of the residual.
  void subtract(std::size_t b, std::size_t made) override {
    if (!scale_images_->is_delta(b)) scale_images_->spread(b, st_.scratch(), st_.model());
    st_.planes().subtract(b, *scale_images_, *minor_, st_.component_count() - made);
    resources_.synchronize();
  }

  void release(CleanResult& result) override {
    result.diagnostics.seconds.setup = setup_seconds_;
    result.diagnostics.setup_parts = std::move(setup_parts_);
    // Not setup: cudaMemGetInfo over the whole run so far (sample_memory each major cycle), which
    // goes into the kernel driver and may be locked across GPUs.
    result.diagnostics.setup_parts.emplace_back("memory_queries_whole_run", st_.memory_query_seconds());
    result.diagnostics.minor_stats = minor_->stats();
  }

 private:
  // Plans made by the worker's two caches so far, and the seconds it took.
  static std::pair<std::size_t, double> plan_totals(gpu::GpuResources& r) {
    return {r.plans().plans_made() + r.side_plans().plans_made(),
            r.plans().seconds_making() + r.side_plans().seconds_making()};
  }

  Clock::time_point t_start_;
  SetupLaps laps_;
  std::pair<std::size_t, double> plans_before_;
  gpu::GpuResources& resources_;
  const CleanSettings& settings_;
  const cudaStream_t s_;
  const bool neg_;
  gpu::GpuImageState st_;
  const std::size_t n_;
  std::vector<CleanScale> scales_;
  const std::size_t k_max_;
  cuda::DeviceBuffer<float> active_values_, sorted_values_;
  cuda::DeviceBuffer<std::uint32_t> active_pixels_, sorted_pixels_;
  const std::size_t sort_bytes_;
  cuda::DeviceBuffer<std::byte> sort_temp_;
  cuda::DeviceBuffer<unsigned long long> count_;
  std::vector<cuda::DeviceBuffer<float>> patches_;
  std::optional<gpu::ScaleImagesGpu> scale_images_;
  std::optional<gpu::MinorCycleEngine> minor_;
  std::size_t cycle_cap_ = 1;  // the most components one minor cycle makes: what minor_ was sized for
  std::optional<gpu::SelectComparison> compare_;
  RunObserver* observer_ = nullptr;  // --compare-select's
  gpu::ScaleImagesGpu::Choice choice_;
  std::size_t count_selected_ = 0;
  double setup_seconds_ = 0.0;
  std::vector<std::pair<std::string, double>> setup_parts_;
};

}  // namespace

namespace gpu {
std::unique_ptr<MajorCycleSteps> make_clark_steps_gpu(GpuResources& resources, const CleanProblem& problem,
                                                      const CleanSettings& settings) {
  return std::make_unique<ClarkStepsGpu>(resources, problem, settings);
}
}  // namespace gpu

}  // namespace gpuclean::clean

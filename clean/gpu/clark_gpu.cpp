#include "clean/gpu/clark_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <optional>

#include "clean/errors.hpp"
#include "clean/scale_set.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/joined_planes_gpu.hpp"
#include "clean/gpu/local_rms_gpu.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/gpu/scale_images_gpu.hpp"
#include "clean/gpu/scale_set_gpu.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/select_comparison.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

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

// (first component, scale) of each major cycle.
using CycleScales = std::vector<std::pair<std::size_t, std::uint32_t>>;

void assign_scales(const CycleScales& cycles, std::vector<Component>& components) {
  for (std::size_t c = 0; c < cycles.size(); ++c) {
    const std::size_t end = c + 1 < cycles.size() ? std::min(cycles[c + 1].first, components.size()) : components.size();
    for (std::size_t i = cycles[c].first; i < end; ++i) components[i].scale = cycles[c].second;
  }
}

std::vector<Component> components_so_far(gpu::GpuImageState& st, std::size_t count, const CycleScales& cycles) {
  const std::vector<std::uint32_t> pixels = st.component_pixels(count);
  std::vector<Component> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i].x = static_cast<std::uint32_t>(pixels[i] % st.width());
    out[i].y = static_cast<std::uint32_t>(pixels[i] / st.width());
  }
  assign_scales(cycles, out);
  return out;
}

class ClarkStepsGpu final : public MajorCycleSteps {
 public:
  // Joined planes: the peaks are searched on the integrated image (st_'s residual), the minor and
  // major cycles work on every plane, each through its own PSF (the integrated PSF's transform is
  // not needed).
  ClarkStepsGpu(gpu::GpuResources& resources, const CleanProblem& problem, const CleanSettings& settings)
      : t_start_(Clock::now()),
        resources_(resources),
        problem_(problem),
        settings_(settings),
        s_(resources.stream()),
        neg_(settings.allow_negative),
        st_(resources, problem, settings, problem.joined ? gpu::PsfOnDevice::kNone : gpu::PsfOnDevice::kSpectrum),
        n_(st_.size()),
        // The scales (one delta function without --multiscale: plain Clark) and their beam patches.
        scales_(gpu::prepare_scales_gpu(resources, problem.psf, settings,
                                        scale_beam_pixels(problem, settings), st_.width(),
                                        st_.height(), st_.exterior_sidelobe())),
        k_max_(std::min(settings.select_k, n_)),
        active_values_(k_max_, s_),
        sorted_values_(k_max_, s_),
        active_pixels_(k_max_, s_),
        sorted_pixels_(k_max_, s_),
        sort_bytes_(gpu::sort_by_pixel_temp_bytes(k_max_)),
        sort_temp_(std::max<std::size_t>(sort_bytes_, 1), s_),
        count_(1, s_) {
    if (problem.joined) {
      joined_.emplace(resources, *problem.joined, scales_, st_.width(), st_.height(), k_max_);
      for (std::size_t b = 0; b < scales_.size(); ++b) scales_[b].sidelobe = joined_->sidelobe(b);
    }
    for (const CleanScale& sc : scales_) {
      const std::vector<float> h_patch = beam_patch(sc.minor_psf, sc.patch);
      patches_.emplace_back(h_patch.size(), s_);
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(patches_.back().data(), h_patch.data(), h_patch.size() * sizeof(float),
                                        cudaMemcpyHostToDevice, s_));
    }
    scale_images_.emplace(resources, st_, scales_);
    // The full PSF only for its transform (cached across runs); the minor cycles need the patch alone.
    if (!joined_) conv_.emplace(resources.plans(), s_, st_.psf_spectrum());
    st_.sample_memory();
    // Scales are smallest first, so the first patch is the narrowest (set_patch's rule).
    cycle_cap_ = std::min(settings.niter, kMaxCycleComponents);
    minor_.emplace(s_, st_.width(), st_.height(), patches_[0].data(), static_cast<int>(scales_[0].patch), k_max_,
                   cycle_cap_);
    if (settings.compare_select) compare_.emplace(s_, settings, k_max_);
    setup_seconds_ = since(t_start_);
  }

  const std::vector<CleanScale>& scales() const override { return scales_; }

  ScaleChoice choose() override {
    choice_ = scale_images_->choose();
    return {choice_.scale, key(choice_.peak), choice_.biased, choice_.unweighted};
  }
  float residual_peak() override { return key(scale_images_->residual_peak()); }
  double robust_sigma() override {
    double sigma = 0.0;
    st_.threshold(&sigma);
    return sigma;
  }
  double model_flux() override { return st_.model_flux(); }

  NoiseMapRange make_noise_map(const LocalRmsSettings& local, double window_fwhm_pixels) override {
    gpu::local_noise_gpu(s_, st_.residual(), st_.width(), st_.height(), local, window_fwhm_pixels, rms_);
    scale_images_->set_weights(rms_.weights.data());
    weighing_ = true;
    st_.sample_memory();
    return {rms_.min_rms, rms_.max_rms};
  }
  void drop_weights() override {
    weighing_ = false;
    scale_images_->set_weights(nullptr);
  }

  // Made on the host, as the CPU makes them, from the components so far.
  std::vector<Component> components(const CleanResult& result) override {
    return components_so_far(st_, result.iterations, cycle_scales_);
  }
  void restrict(const std::vector<std::vector<std::uint8_t>>& masks) override { scale_images_->restrict(masks); }

  Selection select(const ScaleChoice&, double limit, std::size_t cycle, CleanResult& result) override {
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
      result.select_comparison.push_back(
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
  std::size_t minor_cycle(std::size_t b, double limit, std::size_t budget_left, CleanResult& result) override {
    const CleanScale& scale = scales_[b];
    // An outer loop (WSClean's) may raise niter past the engine's size: the rest takes more cycles.
    const std::size_t budget = std::min(budget_left, cycle_cap_);
    st_.reserve_components(result.iterations, budget);
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
    req.comp_pixels = st_.comp_pixels() + result.iterations;
    req.comp_fluxes = st_.comp_fluxes() + result.iterations;
    req.delta = st_.scratch();
    req.model = scale_images_->is_delta(b) ? st_.model() : nullptr;
    req.flux_divisor = scale.psf_peak;
    req.weights = weighing_ ? rms_.weights.data() : nullptr;
    std::uint32_t made = 0;
    if (joined_) {
      joined_->reserve_components(result.iterations, budget);
      joined_->gather(b, *scale_images_, sorted_pixels_.data(), req.count);
      made = minor_->run_joined(req, joined_->request(b, result.iterations));
    } else {
      made = minor_->run(req);
    }
    cycle_scales_.emplace_back(result.iterations, static_cast<std::uint32_t>(b));
    return made;
  }

  // The components (x) K into the model, and through the full PSF out of the residual.
  void subtract(std::size_t b, std::size_t made, CleanResult& result) override {
    if (!scale_images_->is_delta(b)) scale_images_->spread(b, st_.scratch(), st_.model());
    if (joined_) {
      joined_->subtract(b, *scale_images_, *minor_, result.iterations - made, st_);
    } else {
      conv_->convolve(st_.scratch());
      conv_->subtract_from(st_.residual(), st_.mask(), st_.masked());
    }
    resources_.synchronize();
  }

  void set_residuals(const std::vector<const float*>& planes) override {
    if (joined_) return joined_->set_residuals(planes, st_);
    st_.set_residual(only_plane(planes));
  }
  std::vector<HostImage> model_images() override {
    return joined_ ? joined_->model_images() : std::vector{st_.model_image()};
  }
  std::vector<HostImage> residual_images() override {
    return joined_ ? joined_->residual_images() : std::vector{st_.residual_image()};
  }

  void finish(CleanResult& result) override {
    result.seconds.setup = setup_seconds_;
    result.minor_stats = minor_->stats();
    if (problem_.keep_noise_map && rms_.map.size())
      result.noise_map = gpu::download_map(s_, rms_, st_.width(), st_.height());
    rms_ = gpu::LocalRmsDevice();
    conv_.reset();  // restoration needs the room
    st_.finish(problem_, result);
    if (joined_) {
      const auto t = Clock::now();
      joined_->finish(problem_.restoring_beam, result);
      result.seconds.restore += since(t);
    }
    assign_scales(cycle_scales_, result.components);
    result.scales = summarise_scales(scales_, result.components);
  }

 private:
  float key(const Peak& p) const { return p.index < 0 ? 0.0f : (neg_ ? std::abs(p.value) : p.value); }

  Clock::time_point t_start_;
  gpu::GpuResources& resources_;
  const CleanProblem& problem_;
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
  std::optional<gpu::JoinedPlanesGpu> joined_;
  std::vector<cuda::DeviceBuffer<float>> patches_;
  std::optional<gpu::ScaleImagesGpu> scale_images_;
  std::optional<gpu::FftConvolverGpu> conv_;
  std::optional<gpu::MinorCycleEngine> minor_;
  std::size_t cycle_cap_ = 1;  // the most components one minor cycle makes: what minor_ was sized for
  std::optional<gpu::SelectComparison> compare_;
  gpu::ScaleImagesGpu::Choice choice_;
  std::size_t count_selected_ = 0;
  gpu::LocalRmsDevice rms_;
  bool weighing_ = false;
  CycleScales cycle_scales_;
  double setup_seconds_ = 0.0;
};

}  // namespace

namespace gpu {
std::unique_ptr<MajorCycleSteps> make_clark_steps_gpu(GpuResources& resources, const CleanProblem& problem,
                                                      const CleanSettings& settings) {
  return std::make_unique<ClarkStepsGpu>(resources, problem, settings);
}
}  // namespace gpu

}  // namespace gpuclean::clean

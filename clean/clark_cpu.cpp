#include "clean/clark_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "clean/errors.hpp"
#include "clean/fft_convolver_cpu.hpp"
#include "clean/image_stats.hpp"
#include "clean/joined_planes_cpu.hpp"
#include "clean/minor_cycle_cpu.hpp"
#include "clean/restore.hpp"
#include "clean/scale_images_cpu.hpp"
#include "select/cpu_reference.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

class ClarkStepsCpu final : public MajorCycleSteps {
 public:
  ClarkStepsCpu(const CleanProblem& problem, const CleanSettings& settings)
      : problem_(problem),
        settings_(settings),
        neg_(settings.allow_negative),
        width_(problem.dirty.width),
        n_(problem.dirty.size()),
        residual_(problem.dirty),
        model_(problem.dirty.width, problem.dirty.height),
        scales_(prepare_scales(problem.psf, settings,
                               scale_beam_pixels(problem, settings), problem.dirty.width,
                               problem.dirty.height, settings.threads)),
        masked_(n_),
        delta_(n_, 0.0f) {
    if (problem.joined) {
      joined_.emplace(*problem.joined, scales_, settings.threads);
      for (std::size_t b = 0; b < scales_.size(); ++b) scales_[b].sidelobe = joined_->sidelobe(b);
    } else {  // a joined run subtracts through every plane's own PSF
      psf_conv_.emplace(problem.psf.image, problem.psf.peak_x, problem.psf.peak_y, width_, problem.dirty.height,
                        settings.threads);
    }
    scale_images_.emplace(scales_, problem.mask, width_, problem.dirty.height, settings.threads);
    minor_.emplace(scales_[0].minor_psf, scales_[0].patch, width_, n_);
  }

  const std::vector<CleanScale>& scales() const override { return scales_; }

  ScaleChoice choose() override {
    choice_ = scale_images_->choose(residual_.pixels, neg_, settings_.threads);
    return {choice_.scale, key(choice_.peak), choice_.biased, choice_.unweighted};
  }
  float residual_peak() override {
    return key(scale_images_->residual_peak(residual_.pixels, neg_, settings_.threads));
  }
  double robust_sigma() override { return clean::robust_sigma(residual_.pixels); }
  double model_flux() override { return total_flux(model_.pixels); }

  NoiseMapRange make_noise_map(const LocalRmsSettings& local, double window_fwhm_pixels) override {
    HostImage map = local_noise_map(residual_, local, window_fwhm_pixels, settings_.threads);
    rms_ = local_rms_weights(map);
    if (problem_.keep_noise_map) noise_map_ = std::move(map);
    scale_images_->set_weights(&rms_.weights);
    weighing_ = true;
    return {rms_.min_rms, rms_.max_rms};
  }
  void drop_weights() override {
    weighing_ = false;
    scale_images_->set_weights(nullptr);
  }

  std::vector<Component> components(const CleanResult& result) override { return result.components; }
  void restrict(const std::vector<std::vector<std::uint8_t>>& masks) override { scale_images_->restrict(masks); }

  Selection select(const ScaleChoice& choice, double limit, std::size_t, CleanResult&) override {
    const auto b = static_cast<std::size_t>(choice.scale);
    const auto order = neg_ ? select::Order::kLargestAbs : select::Order::kLargest;
    const std::vector<float>& scale_image = scale_images_->image(choice_, residual_.pixels);
    const std::vector<std::uint8_t>& mask = scale_images_->mask(b);
    for (std::size_t i = 0; i < n_; ++i) masked_[i] = mask[i] ? scale_image[i] : std::numeric_limits<float>::quiet_NaN();
    const std::size_t above = select::count_keys_above_cpu(masked_, static_cast<float>(limit), order);
    const std::size_t k = std::max<std::size_t>(1, std::min(settings_.select_k, above));
    const select::TopK top = select::top_k_cpu(masked_, {k, order, false});
    active_.clear();
    for (std::size_t j = 0; j < top.indices.size(); ++j) {
      const std::uint32_t i = top.indices[j];
      active_.push_back({static_cast<std::int32_t>(i % width_), static_cast<std::int32_t>(i / width_), top.values[j],
                         weighing_ ? rms_.weights[i] : 1.0f});
    }
    if (joined_) joined_->gather(b, *scale_images_, active_, plane_values_);
    return {active_.size(), 0.0};
  }

  std::size_t minor_cycle(std::size_t b, double limit, std::size_t budget, CleanResult& result) override {
    const CleanScale& scale = scales_[b];
    minor_->set_psf(scale.minor_psf, scale.patch);
    return joined_ ? minor_->run_joined(active_, plane_values_, joined_->minor(b), limit, settings_.gain, neg_, budget,
                                        &result.components, &result.plane_fluxes)
                   : minor_->run(active_, limit, settings_.gain, neg_, budget, &result.components);
  }

  // The components (x) K into the model, and through the full PSF out of the residual. The
  // per-pixel sums go through the kernel by FFT, as on the GPU.
  void subtract(std::size_t b, std::size_t made, CleanResult& result) override {
    const CleanScale& scale = scales_[b];
    const std::size_t first = result.components.size() - made;
    std::fill(delta_.begin(), delta_.end(), 0.0f);
    const bool delta_scale = scale_images_->is_delta(b);
    for (std::size_t c = first; c < result.components.size(); ++c) {
      Component& comp = result.components[c];
      comp.scale = static_cast<std::uint32_t>(b);
      comp.flux /= scale.psf_peak;  // exact for the delta scale's 1
      const std::size_t i = static_cast<std::size_t>(comp.y) * width_ + comp.x;
      delta_[i] += comp.flux;
      if (delta_scale) model_.pixels[i] += comp.flux;
    }
    if (!delta_scale) {
      scale_images_->convolve(b, delta_.data());
      for (std::size_t i = 0; i < n_; ++i) model_.pixels[i] += delta_[i];
    }
    if (joined_) {  // every plane through its own PSF; the integrated residual remade from them
      const std::size_t np = problem_.joined->planes.size();
      for (std::size_t i = first * np; i < result.plane_fluxes.size(); ++i) result.plane_fluxes[i] /= scale.psf_peak;
      joined_->subtract(b, *scale_images_, result.components, first, result.plane_fluxes, residual_);
    } else {
      psf_conv_->convolve(delta_.data(), delta_.data());
      for (std::size_t i = 0; i < n_; ++i) residual_.pixels[i] -= delta_[i];
    }
  }

  void set_residuals(const std::vector<const float*>& planes) override {
    if (joined_) return joined_->set_residuals(planes, residual_);
    std::copy(only_plane(planes), only_plane(planes) + n_, residual_.pixels.begin());
  }
  std::vector<HostImage> model_images() override { return joined_ ? joined_->models() : std::vector{model_}; }
  std::vector<HostImage> residual_images() override {
    return joined_ ? joined_->residuals() : std::vector{residual_};
  }

  void finish(CleanResult& result) override {
    result.residual = std::move(residual_);
    result.model = std::move(model_);
    if (problem_.keep_noise_map) result.noise_map = std::move(noise_map_);
    result.scales = summarise_scales(scales_, result.components);
    restore_if_asked(problem_, settings_.threads, result);
    if (joined_) {
      const auto t = Clock::now();
      joined_->finish(problem_.restoring_beam, settings_.threads, result);
      result.seconds.restore += since(t);
    }
  }

 private:
  float key(const Peak& p) const { return p.index < 0 ? 0.0f : (neg_ ? std::abs(p.value) : p.value); }

  const CleanProblem& problem_;
  const CleanSettings& settings_;
  const bool neg_;
  const std::size_t width_, n_;
  HostImage residual_, model_, noise_map_;
  std::vector<CleanScale> scales_;
  std::optional<JoinedPlanesCpu> joined_;
  std::optional<FftConvolverCpu> psf_conv_;
  std::optional<ScaleImagesCpu> scale_images_;
  std::optional<MinorCycleCpu> minor_;
  ScaleImagesCpu::Choice choice_;
  std::vector<float> masked_, delta_, plane_values_;
  std::vector<ActiveMember> active_;
  LocalRmsWeights rms_;
  bool weighing_ = false;
};

}  // namespace

std::unique_ptr<MajorCycleSteps> make_clark_steps_cpu(const CleanProblem& problem, const CleanSettings& settings) {
  return std::make_unique<ClarkStepsCpu>(problem, settings);
}

}  // namespace gpuclean::clean

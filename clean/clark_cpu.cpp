#include "clean/clark_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "clean/cpu_image_state.hpp"
#include "clean/minor_cycle_cpu.hpp"
#include "clean/scale_images_cpu.hpp"
#include "select/cpu_reference.hpp"

namespace gpuclean::clean {
namespace {

class ClarkStepsCpu final : public MajorCycleSteps {
 public:
  ClarkStepsCpu(const CleanProblem& problem, const CleanSettings& settings)
      : settings_(settings),
        neg_(settings.allow_negative),
        width_(problem.dirty.width),
        n_(problem.dirty.size()),
        st_(problem, settings),
        scales_(prepare_scales(problem.psf, settings,
                               scale_beam_pixels(problem, settings), problem.dirty.width,
                               problem.dirty.height, settings.threads)),
        masked_(n_),
        delta_(n_, 0.0f) {
    st_.plan(scales_);
    scale_images_.emplace(scales_, problem.mask, width_, problem.dirty.height, settings.threads);
    minor_.emplace(scales_[0].minor_psf, scales_[0].patch, width_, n_);
  }

  ImageState& state() override { return st_; }
  const std::vector<CleanScale>& scales() const override { return scales_; }

  ScaleChoice choose() override {
    scale_images_->set_weights(st_.weights());
    choice_ = scale_images_->choose(st_.residual().pixels, neg_, settings_.threads);
    return {choice_.scale, peak_key(choice_.peak, neg_), choice_.biased, choice_.unweighted};
  }
  float residual_peak() override {
    return peak_key(scale_images_->residual_peak(st_.residual().pixels, neg_, settings_.threads), neg_);
  }

  void residuals_replaced() override { scale_images_->forget_peak(); }
  void restrict(const std::vector<std::vector<std::uint8_t>>& masks) override { scale_images_->restrict(masks); }

  Selection select(const ScaleChoice& choice, double limit, std::size_t) override {
    const auto b = static_cast<std::size_t>(choice.scale);
    const auto order = neg_ ? select::Order::kLargestAbs : select::Order::kLargest;
    const std::vector<float>& scale_image = scale_images_->image(choice_, st_.residual().pixels);
    const std::vector<std::uint8_t>& mask = scale_images_->mask(b);
    for (std::size_t i = 0; i < n_; ++i) masked_[i] = mask[i] ? scale_image[i] : std::numeric_limits<float>::quiet_NaN();
    const std::size_t above = select::count_keys_above_cpu(masked_, static_cast<float>(limit), order);
    const std::size_t k = std::max<std::size_t>(1, std::min(settings_.select_k, above));
    const select::TopK top = select::top_k_cpu(masked_, {k, order, false});
    const std::vector<float>* weights = st_.weights();
    active_.clear();
    for (std::size_t j = 0; j < top.indices.size(); ++j) {
      const std::uint32_t i = top.indices[j];
      active_.push_back({static_cast<std::int32_t>(i % width_), static_cast<std::int32_t>(i / width_), top.values[j],
                         weights ? (*weights)[i] : 1.0f});
    }
    return {active_.size(), 0.0};
  }

  std::size_t minor_cycle(std::size_t b, double limit, std::size_t budget) override {
    const CleanScale& scale = scales_[b];
    minor_->set_psf(scale.minor_psf, scale.patch);
    return st_.planes().minor_cycle(*minor_, b, *scale_images_, active_, limit, settings_.gain, neg_, budget,
                                    st_.component_list(), st_.plane_fluxes());
  }

  // The components (x) K into the model, and through the full PSF (every plane's own, when
  // joined) out of the residual. The per-pixel sums go through the kernel by FFT, as on the GPU.
  void subtract(std::size_t b, std::size_t made) override {
    const CleanScale& scale = scales_[b];
    std::vector<Component>& components = st_.component_list();
    const std::size_t first = components.size() - made;
    std::fill(delta_.begin(), delta_.end(), 0.0f);
    const bool delta_scale = scale_images_->is_delta(b);
    HostImage& model = st_.model();
    for (std::size_t c = first; c < components.size(); ++c) {
      Component& comp = components[c];
      comp.flux /= scale.psf_peak;  // exact for the delta scale's 1
      const std::size_t i = static_cast<std::size_t>(comp.y) * width_ + comp.x;
      delta_[i] += comp.flux;
      if (delta_scale) model.pixels[i] += comp.flux;
    }
    if (!delta_scale) {
      scale_images_->convolve(b, delta_.data());
      for (std::size_t i = 0; i < n_; ++i) model.pixels[i] += delta_[i];
    }
    st_.planes().subtract(b, scale.psf_peak, *scale_images_, first, delta_, components, st_.plane_fluxes());
  }

 private:
  const CleanSettings& settings_;
  const bool neg_;
  const std::size_t width_, n_;
  CpuImageState st_;
  std::vector<CleanScale> scales_;
  std::optional<ScaleImagesCpu> scale_images_;
  std::optional<MinorCycleCpu> minor_;
  ScaleImagesCpu::Choice choice_;
  std::vector<float> masked_, delta_;
  std::vector<ActiveMember> active_;
};

}  // namespace

std::unique_ptr<MajorCycleSteps> make_clark_steps_cpu(const CleanProblem& problem, const CleanSettings& settings) {
  return std::make_unique<ClarkStepsCpu>(problem, settings);
}

}  // namespace gpuclean::clean

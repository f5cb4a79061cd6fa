#include "clean/hogbom_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "clean/image_stats.hpp"
#include "clean/restore.hpp"
#include "clean/errors.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean {
void subtract_shifted_psf(HostImage& residual, const PreparedPsf& psf, std::size_t x, std::size_t y,
                          float flux) {
  // Image pixel (ix, iy) sees PSF pixel (peak_x + ix - x, peak_y + iy - y).
  const auto ox = static_cast<std::ptrdiff_t>(psf.peak_x) - static_cast<std::ptrdiff_t>(x);
  const auto oy = static_cast<std::ptrdiff_t>(psf.peak_y) - static_cast<std::ptrdiff_t>(y);
  const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, -ox);
  const std::ptrdiff_t x1 = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(residual.width),
                                                     static_cast<std::ptrdiff_t>(psf.image.width) - ox);
  const std::ptrdiff_t y0 = std::max<std::ptrdiff_t>(0, -oy);
  const std::ptrdiff_t y1 = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(residual.height),
                                                     static_cast<std::ptrdiff_t>(psf.image.height) - oy);
  if (x0 >= x1) return;
#pragma omp parallel for if ((y1 - y0) * (x1 - x0) > (1 << 15))
  for (std::ptrdiff_t iy = y0; iy < y1; ++iy) {
    float* r = residual.pixels.data() + static_cast<std::size_t>(iy) * residual.width;
    const float* p = psf.image.pixels.data() + static_cast<std::size_t>(iy + oy) * psf.image.width;
    for (std::ptrdiff_t ix = x0; ix < x1; ++ix) r[ix] -= flux * p[ix + ox];
  }
}

namespace {

class HogbomStepsCpu final : public MajorCycleSteps {
 public:
  HogbomStepsCpu(const CleanProblem& problem, const CleanSettings& settings)
      : problem_(problem),
        settings_(settings),
        neg_(settings.allow_negative),
        residual_(problem.dirty),
        model_(problem.dirty.width, problem.dirty.height),
        mask_(problem.mask),
        scales_(delta_scale(settings, problem)) {}

  const std::vector<CleanScale>& scales() const override { return scales_; }
  ScaleChoice choose() override {
    peak_ = find_peak(residual_.pixels, mask_, neg_, settings_.threads);
    const float k = key(peak_);
    return {peak_.index >= 0 ? 0 : -1, k, k, k};
  }
  float residual_peak() override { return key(find_peak(residual_.pixels, mask_, neg_, settings_.threads)); }
  double robust_sigma() override { return clean::robust_sigma(residual_.pixels); }
  double model_flux() override { return total_flux(model_.pixels); }
  NoiseMapRange make_noise_map(const LocalRmsSettings&, double) override {
    throw InvalidSettings("--local-rms runs on Clark's major/minor cycles; drop --algorithm hogbom.");
  }
  void drop_weights() override {}
  std::vector<Component> components(const CleanResult& result) override { return result.components; }
  void restrict(const std::vector<std::vector<std::uint8_t>>& masks) override { mask_ = masks.at(0); }
  Selection select(const ScaleChoice&, double, std::size_t, CleanResult&) override { return {}; }

  std::size_t minor_cycle(std::size_t, double limit, std::size_t budget, CleanResult& result) override {
    std::size_t made = 0;
    Peak peak = peak_;
    while (made < budget && peak.index >= 0 && key(peak) > limit) {
      const auto i = static_cast<std::size_t>(peak.index);
      const std::size_t x = i % residual_.width, y = i / residual_.width;
      const float flux = static_cast<float>(settings_.gain) * peak.value;
      model_.pixels[i] += flux;
      result.components.push_back({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), flux});
      ++made;
      subtract_shifted_psf(residual_, problem_.psf, x, y, flux);
      peak = find_peak(residual_.pixels, mask_, neg_, settings_.threads);
    }
    return made;
  }
  void subtract(std::size_t, std::size_t, CleanResult&) override {}  // done step by step
  void set_residuals(const std::vector<const float*>& planes) override {
    std::copy(only_plane(planes), only_plane(planes) + residual_.size(), residual_.pixels.begin());
  }
  std::vector<HostImage> model_images() override { return {model_}; }
  std::vector<HostImage> residual_images() override { return {residual_}; }

  void finish(CleanResult& result) override {
    result.residual = std::move(residual_);
    result.model = std::move(model_);
    result.scales = summarise_scales(scales_, result.components);
    restore_if_asked(problem_, settings_.threads, result);
  }

 private:
  static std::vector<CleanScale> delta_scale(const CleanSettings& settings, const CleanProblem& problem) {
    return plan_scales(settings, 0.0, problem.dirty.width, problem.dirty.height, 1);
  }
  float key(const Peak& p) const { return p.index < 0 ? 0.0f : (neg_ ? std::abs(p.value) : p.value); }

  const CleanProblem& problem_;
  const CleanSettings& settings_;
  const bool neg_;
  HostImage residual_, model_;
  std::vector<std::uint8_t> mask_;
  std::vector<CleanScale> scales_;
  Peak peak_;
};

}  // namespace

std::unique_ptr<MajorCycleSteps> make_hogbom_steps_cpu(const CleanProblem& problem, const CleanSettings& settings) {
  return std::make_unique<HogbomStepsCpu>(problem, settings);
}

}  // namespace gpuclean::clean

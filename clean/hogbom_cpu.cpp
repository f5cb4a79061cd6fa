#include "clean/hogbom_cpu.hpp"

#include <algorithm>
#include <cmath>

#include "clean/cpu_image_state.hpp"
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

// Högbom's own steps: its peak search and its minor cycle; the image state does the rest.
class HogbomStepsCpu final : public MajorCycleSteps {
 public:
  HogbomStepsCpu(const CleanProblem& problem, const CleanSettings& settings)
      : problem_(problem),
        settings_(settings),
        neg_(settings.allow_negative),
        st_(problem, settings),
        scales_(plan_scales(settings, 0.0, problem.dirty.width, problem.dirty.height, 1)) {}

  ImageState& state() override { return st_; }
  const std::vector<CleanScale>& scales() const override { return scales_; }
  ScaleChoice choose() override {
    peak_ = st_.peak();
    const float k = peak_key(peak_, neg_);
    return {peak_.index >= 0 ? 0 : -1, k, k, k};
  }
  float residual_peak() override { return peak_key(st_.peak(), neg_); }

  std::size_t minor_cycle(std::size_t, double limit, std::size_t budget) override {
    HostImage& residual = st_.residual();
    std::size_t made = 0;
    Peak peak = peak_;
    while (made < budget && peak.index >= 0 && peak_key(peak, neg_) > limit) {
      const auto i = static_cast<std::size_t>(peak.index);
      const std::size_t x = i % residual.width, y = i / residual.width;
      const float flux = static_cast<float>(settings_.gain) * peak.value;
      st_.model().pixels[i] += flux;
      st_.component_list().push_back({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), flux});
      ++made;
      subtract_shifted_psf(residual, problem_.psf, x, y, flux);
      peak = st_.peak();
    }
    return made;
  }

 private:
  const CleanProblem& problem_;
  const CleanSettings& settings_;
  const bool neg_;
  CpuImageState st_;
  std::vector<CleanScale> scales_;
  Peak peak_;
};

}  // namespace

std::unique_ptr<MajorCycleSteps> make_hogbom_steps_cpu(const CleanProblem& problem, const CleanSettings& settings) {
  return std::make_unique<HogbomStepsCpu>(problem, settings);
}

}  // namespace gpuclean::clean

// What a new algorithm writes: its search and its minor cycle over the CPU image state; the
// driver and the state do the rest (major_cycle_steps.hpp).
#include "tests/clean/toy_steps.hpp"

#include <cmath>

#include "clean/cpu_image_state.hpp"

namespace gpuclean::test {
namespace {

namespace gc = gpuclean::clean;

class DeltaPsfSteps final : public gc::MajorCycleSteps {
 public:
  DeltaPsfSteps(const gc::CleanProblem& problem, const gc::CleanSettings& settings)
      : st_(problem, settings), scales_(gc::plan_scales(settings, 0.0, problem.dirty.width, problem.dirty.height, 1)) {}

  gc::ImageState& state() override { return st_; }
  const std::vector<gc::CleanScale>& scales() const override { return scales_; }
  gc::ScaleChoice choose() override {
    const float k = residual_peak();
    return {peak_.index >= 0 ? 0 : -1, k, k, k};
  }
  float residual_peak() override { return std::abs((peak_ = st_.peak()).value); }
  std::size_t minor_cycle(std::size_t, double limit, std::size_t budget) override {
    std::size_t made = 0;
    for (; made < budget && residual_peak() > limit; ++made) {
      const auto i = static_cast<std::size_t>(peak_.index);
      const float flux = static_cast<float>(st_.settings().gain) * peak_.value;
      st_.residual().pixels[i] -= flux;
      st_.model().pixels[i] += flux;
      st_.component_list().push_back({static_cast<std::uint32_t>(i % st_.residual().width),
                              static_cast<std::uint32_t>(i / st_.residual().width), flux, 0});
    }
    return made;
  }

 private:
  gc::CpuImageState st_;
  std::vector<gc::CleanScale> scales_;
  gc::Peak peak_;
};

std::unique_ptr<gc::MajorCycleSteps> make(const gc::CleanProblem& problem, const gc::CleanSettings& settings) {
  return std::make_unique<DeltaPsfSteps>(problem, settings);
}

}  // namespace

const gc::AlgorithmRow& delta_psf_row() {
  static const gc::AlgorithmRow row{"delta-psf", make};
  return row;
}

}  // namespace gpuclean::test

#include "clean/gpu/gpu_deconvolver.hpp"

#include <chrono>

#include "clean/gpu/gpu_resources.hpp"
#include "clean/major_cycle.hpp"

namespace gpuclean::clean::gpu {
namespace {

class GpuDeconvolver final : public Deconvolver {
 public:
  GpuDeconvolver(std::string name, GpuStepsMaker make) : name_(std::move(name)), make_(make) {}
  std::string_view name() const override { return name_; }
  void prepare(std::size_t width, std::size_t height) override {
    if (!resources_) resources_ = std::make_unique<GpuResources>();
    if (width && height) resources_->prepare_plans(width, height);
  }
  std::unique_ptr<MajorCycleSteps> steps(const CleanProblem& problem, const CleanSettings& settings) override {
    check_joinable(problem, settings);
    if (!resources_) {
      const auto t0 = std::chrono::steady_clock::now();
      resources_ = std::make_unique<GpuResources>();
      resources_->unreported_creation_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return make_(*resources_, problem, settings);
  }

 private:
  std::string name_;
  GpuStepsMaker make_;
  std::unique_ptr<GpuResources> resources_;
};

}  // namespace

std::unique_ptr<Deconvolver> make_gpu_deconvolver(std::string name, GpuStepsMaker make) {
  return std::make_unique<GpuDeconvolver>(std::move(name), make);
}

}  // namespace gpuclean::clean::gpu

#pragma once
// The image state (image_state.hpp) on the CPU, for every CPU algorithm: the residual (a joined
// run's integrated image), the model, the clean mask of an algorithm with one scale, the
// --local-rms map and its weights, the components (the steps' minor cycles append them) and the
// plane set (plane_set_cpu.hpp) once an algorithm that subtracts through the PSF plans it.

#include <cstdint>
#include <memory>
#include <vector>

#include "clean/image_state.hpp"
#include "clean/plane_set_cpu.hpp"

namespace gpuclean::clean {

class CpuImageState final : public ImageState {
 public:
  /// The dirty image becomes the residual; the model starts empty. `problem` and `settings`
  /// outlive the state.
  CpuImageState(const CleanProblem& problem, const CleanSettings& settings);

  double robust_sigma() override;
  double model_flux() override;
  Peak peak() override;
  NoiseMapRange make_noise_map(const LocalRmsSettings& settings, double window_fwhm_pixels) override;
  void drop_weights() override { weighing_ = false; }
  std::vector<Component> components(std::size_t count) override;
  void restrict(const std::vector<std::uint8_t>& mask) override { mask_ = mask; }
  void set_residuals(const std::vector<const float*>& planes) override;
  std::vector<HostImage> model_images() override;
  std::vector<HostImage> residual_images() override;
  void finish(CleanResult& result) override;

  /// The plane set for `scales` (the run's; joined planes set their sidelobes), made once.
  PlaneSetCpu& plan(std::vector<CleanScale>& scales);
  PlaneSetCpu& planes() { return *planes_; }

  const CleanProblem& problem() const { return problem_; }
  const CleanSettings& settings() const { return settings_; }
  HostImage& residual() { return residual_; }
  HostImage& model() { return model_; }
  /// The pixels peak() searches: the problem's mask, or restrict()'s.
  const std::vector<std::uint8_t>& mask() const { return mask_; }
  /// The --local-rms weights min_rms / rms while in force, else null.
  const std::vector<float>* weights() const { return weighing_ ? &rms_.weights : nullptr; }
  /// The components so far, in the order they were found (the minor cycles append to it), and
  /// with joined planes each one's plane fluxes (component-major).
  std::vector<Component>& component_list() { return components_; }
  std::vector<float>& plane_fluxes() { return plane_fluxes_; }

 private:
  const CleanProblem& problem_;
  const CleanSettings& settings_;
  HostImage residual_, model_, noise_map_;
  std::vector<std::uint8_t> mask_;
  std::vector<Component> components_;
  std::vector<float> plane_fluxes_;
  LocalRmsWeights rms_;
  bool weighing_ = false;
  std::unique_ptr<PlaneSetCpu> planes_;
};

}  // namespace gpuclean::clean

#include "clean/restore.hpp"

#include <chrono>
#include <cmath>

#include "clean/fft_convolver_cpu.hpp"
#include "clean/quantiles.hpp"
#include "select/cpu_reference.hpp"

namespace gpuclean::clean {

HostImage restore_cpu(const HostImage& model, const HostImage& residual, const PixelGaussian& beam,
                      int threads) {
  const HostImage kernel = gaussian_kernel(beam, 2 * model.width - 1, 2 * model.height - 1);
  FftConvolverCpu conv(kernel, kernel.width / 2, kernel.height / 2, model.width, model.height, threads);
  HostImage restored(model.width, model.height);
  conv.convolve(model.pixels.data(), restored.pixels.data());
  for (std::size_t i = 0; i < restored.size(); ++i) restored.pixels[i] += residual.pixels[i];
  return restored;
}

void restore_if_asked(const CleanProblem& problem, int threads, CleanResult& result) {
  if (!problem.restoring_beam) return;
  const auto t0 = std::chrono::steady_clock::now();
  result.images.restored = restore_cpu(result.images.model, result.images.residual, *problem.restoring_beam, threads);
  if (const std::vector<double> quantiles = problem.observer ? problem.observer->restored_quantiles()
                                                             : std::vector<double>{};
      !quantiles.empty()) {
    std::size_t n_valid = 0;
    for (float v : result.images.restored.pixels) n_valid += !std::isnan(v);
    const auto ranks = quantile_ranks(quantiles, n_valid);
    if (!ranks.empty()) problem.observer->restored_quantiles_taken(select::multiselect_cpu(result.images.restored.pixels, ranks));
  }
  result.diagnostics.seconds.restore = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace gpuclean::clean

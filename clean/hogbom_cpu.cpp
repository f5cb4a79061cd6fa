#include "clean/hogbom_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "clean/image_stats.hpp"
#include "clean/restore.hpp"
#include "clean/stop_rules.hpp"

namespace gpuclean::clean {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

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

CleanResult HogbomCpu::run(const CleanProblem& problem, const CleanSettings& settings,
                           const CycleCallback& on_cycle) {
  check_joinable(problem, settings);  // Högbom refuses joined planes
  CleanResult result;
  result.residual = problem.dirty;
  result.model = HostImage(problem.dirty.width, problem.dirty.height);
  const bool neg = settings.allow_negative;
  auto key = [neg](float v) { return neg ? std::abs(v) : v; };

  MajorCycleGate gate(settings, on_cycle);
  while (true) {
    Peak peak = find_peak(result.residual.pixels, problem.mask, neg, settings.threads);
    double sigma = 0.0;
    const double threshold = current_threshold(settings, result.residual.pixels, &sigma);
    if (!gate.open(result, peak.index >= 0, peak.index >= 0 ? key(peak.value) : 0.0f, threshold, sigma,
                   total_flux(result.model.pixels), 0)) {
      break;
    }

    const double cycle_limit =
        std::max(result.threshold, (1.0 - settings.mgain) * static_cast<double>(result.peak_residual));
    const auto t_minor = Clock::now();
    while (result.iterations < settings.niter && peak.index >= 0 && key(peak.value) > cycle_limit) {
      const auto i = static_cast<std::size_t>(peak.index);
      const std::size_t x = i % result.residual.width, y = i / result.residual.width;
      const float flux = static_cast<float>(settings.gain) * peak.value;
      result.model.pixels[i] += flux;
      result.components.push_back({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), flux});
      ++result.iterations;
      subtract_shifted_psf(result.residual, problem.psf, x, y, flux);
      peak = find_peak(result.residual.pixels, problem.mask, neg, settings.threads);
    }
    result.seconds.minor += since(t_minor);
  }
  restore_if_asked(problem, settings.threads, result);
  return result;
}

}  // namespace gpuclean::clean

#include "clean/clark_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "clean/fft_convolver_cpu.hpp"
#include "clean/image_stats.hpp"
#include "clean/minor_cycle_cpu.hpp"
#include "clean/restore.hpp"
#include "clean/stop_rules.hpp"
#include "select/cpu_reference.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

float largest_exterior_sidelobe(const PreparedPsf& psf, std::size_t half_width) {
  const auto hw = static_cast<std::ptrdiff_t>(half_width);
  float worst = 0.0f;
  for (std::size_t y = 0; y < psf.image.height; ++y) {
    const auto dy = static_cast<std::ptrdiff_t>(y) - static_cast<std::ptrdiff_t>(psf.peak_y);
    for (std::size_t x = 0; x < psf.image.width; ++x) {
      const auto dx = static_cast<std::ptrdiff_t>(x) - static_cast<std::ptrdiff_t>(psf.peak_x);
      if (std::abs(dx) <= hw && std::abs(dy) <= hw) continue;
      worst = std::max(worst, std::abs(psf.image.at(x, y)));
    }
  }
  return worst;
}

CleanResult ClarkCpu::run(const CleanProblem& problem, const CleanSettings& settings,
                          const CycleCallback& on_cycle) {
  const HostImage& dirty = problem.dirty;
  const std::size_t n = dirty.size();
  CleanResult result;
  result.residual = dirty;
  result.model = HostImage(dirty.width, dirty.height);
  const bool neg = settings.allow_negative;
  const auto order = neg ? select::Order::kLargestAbs : select::Order::kLargest;

  const float sidelobe = std::min(largest_exterior_sidelobe(problem.psf, settings.beam_patch), 1.0f);
  FftConvolverCpu psf_conv(problem.psf.image, problem.psf.peak_x, problem.psf.peak_y, dirty.width,
                           dirty.height, settings.threads);
  MinorCycleCpu minor(problem.psf, settings.beam_patch, dirty.width, dirty.size());
  std::vector<float> masked(n);
  std::vector<float> delta(n, 0.0f);
  std::vector<ActiveMember> active;

  MajorCycleGate gate(settings, on_cycle);
  std::size_t last_candidates = 0;
  while (true) {
    const Peak peak = find_peak(result.residual.pixels, problem.mask, neg, settings.threads);
    double sigma = 0.0;
    const double threshold = current_threshold(settings, result.residual.pixels, &sigma);
    if (!gate.open(result, peak.index >= 0, peak.index >= 0 ? (neg ? std::abs(peak.value) : peak.value) : 0.0f,
                   threshold, sigma, total_flux(result.model.pixels), last_candidates)) {
      break;
    }

    const double limit = std::max({result.threshold, static_cast<double>(sidelobe) * result.peak_residual,
                                   (1.0 - settings.mgain) * result.peak_residual});

    // Active set: the brightest cleanable pixels above the limit.
    const auto t_select = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      masked[i] = problem.mask[i] ? result.residual.pixels[i] : std::numeric_limits<float>::quiet_NaN();
    }
    const std::size_t above = select::count_keys_above_cpu(masked, static_cast<float>(limit), order);
    const std::size_t k = std::max<std::size_t>(1, std::min(settings.select_k, above));
    select::TopK top = select::top_k_cpu(masked, {k, order, false});
    active.clear();
    for (std::size_t j = 0; j < top.indices.size(); ++j) {
      const std::uint32_t i = top.indices[j];
      active.push_back({static_cast<std::int32_t>(i % dirty.width), static_cast<std::int32_t>(i / dirty.width),
                        top.values[j]});
    }
    last_candidates = active.size();
    result.seconds.select += since(t_select);

    const auto t_minor = Clock::now();
    const std::size_t first = result.components.size();
    const std::size_t made = minor.run(active, limit, settings.gain, neg, settings.niter - result.iterations,
                                       &result.components);
    result.iterations += made;
    result.seconds.minor += since(t_minor);
    if (made == 0) {  // the peak itself is at the limit: nothing more can be cleaned safely
      result.reason = StopReason::kThreshold;
      break;
    }

    // Major cycle: subtract this cycle's components through the full PSF.
    const auto t_conv = Clock::now();
    std::fill(delta.begin(), delta.end(), 0.0f);
    for (std::size_t c = first; c < result.components.size(); ++c) {
      const Component& comp = result.components[c];
      const std::size_t i = static_cast<std::size_t>(comp.y) * dirty.width + comp.x;
      delta[i] += comp.flux;
      result.model.pixels[i] += comp.flux;
    }
    psf_conv.convolve(delta.data(), delta.data());
    for (std::size_t i = 0; i < n; ++i) result.residual.pixels[i] -= delta[i];
    result.seconds.convolve += since(t_conv);
  }
  restore_if_asked(problem, settings.threads, result);
  return result;
}

}  // namespace gpuclean::clean

#include "clean/clark_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "clean/auto_mask.hpp"
#include "clean/fft_convolver_cpu.hpp"
#include "clean/image_stats.hpp"
#include "clean/joined_planes_cpu.hpp"
#include "clean/local_rms.hpp"
#include "clean/minor_cycle_cpu.hpp"
#include "clean/restore.hpp"
#include "clean/scale_images_cpu.hpp"
#include "clean/scale_set.hpp"
#include "clean/stop_rules.hpp"
#include "select/cpu_reference.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

CleanResult ClarkCpu::run(const CleanProblem& problem, const CleanSettings& settings,
                          const CycleCallback& on_cycle) {
  const HostImage& dirty = problem.dirty;
  const std::size_t n = dirty.size(), width = dirty.width, height = dirty.height;
  CleanResult result;
  result.residual = dirty;
  result.model = HostImage(width, height);
  const bool neg = settings.allow_negative;
  const auto order = neg ? select::Order::kLargestAbs : select::Order::kLargest;
  const bool multiscale = settings.multiscale.enabled;

  // Joined planes: the peaks are searched on the integrated image (problem.dirty), the minor and
  // major cycles work on every plane.
  check_joinable(problem, settings);
  std::vector<CleanScale> scales = prepare_scales(
      problem.psf, settings, multiscale ? beam_fwhm_pixels(problem) : 0.0, width, height, settings.threads);
  std::optional<JoinedPlanesCpu> joined;
  std::vector<float> plane_values;
  if (problem.joined) {
    joined.emplace(*problem.joined, scales, settings.threads);
    for (std::size_t b = 0; b < scales.size(); ++b) scales[b].sidelobe = joined->sidelobe(b);
  }
  std::optional<FftConvolverCpu> psf_conv;  // a joined run subtracts through every plane's own PSF
  if (!joined)
    psf_conv.emplace(problem.psf.image, problem.psf.peak_x, problem.psf.peak_y, width, height, settings.threads);
  ScaleImagesCpu scale_images(scales, problem.mask, width, height, settings.threads);
  MinorCycleCpu minor(scales[0].minor_psf, scales[0].patch, width, n);
  std::vector<float> masked(n), delta(n, 0.0f);
  std::vector<ActiveMember> active;

  // --local-rms: the noise map of the residual (remade as local_rms.hpp says) and the peak
  // search's weights from it.
  LocalRmsWeights rms;
  bool weighing = settings.local_rms.enabled;
  const double rms_fwhm = weighing ? settings.local_rms.window * beam_fwhm_pixels(problem) : 0.0;
  auto remake_map = [&]() {
    const auto t_map = Clock::now();
    HostImage map = local_noise_map(result.residual, settings.local_rms, rms_fwhm, settings.threads);
    rms = local_rms_weights(map);
    result.local_rms = {true, settings.local_rms.window, rms_fwhm, rms.min_rms, rms.max_rms, 0};
    if (problem.keep_noise_map) result.noise_map = std::move(map);
    scale_images.set_weights(&rms.weights);
    result.seconds.noise_map += since(t_map);
  };
  auto noise = [&]() { return weighing ? std::optional<double>(rms.min_rms) : std::nullopt; };

  MajorCycleGate gate(settings, on_cycle);
  AutoMaskPhase phase(settings);
  std::size_t last_candidates = 0;
  std::optional<float> map_peak;  // the residual's peak when the map was last made
  if (weighing) remake_map();
  while (true) {
    auto t_scales = Clock::now();
    ScaleImagesCpu::Choice choice = scale_images.choose(result.residual.pixels, neg, settings.threads);
    if (weighing) {  // the map is remade once the residual's peak has fallen by kLocalRmsRemakeFactor
      const Peak p = scale_images.residual_peak(result.residual.pixels, neg, settings.threads);
      const float peak_now = p.index < 0 ? 0.0f : (neg ? std::abs(p.value) : p.value);
      if (map_peak && peak_now <= kLocalRmsRemakeFactor * *map_peak) {
        remake_map();
        choice = scale_images.choose(result.residual.pixels, neg, settings.threads);
        map_peak = peak_now;
      }
      if (!map_peak) map_peak = peak_now;
    }
    if (multiscale) result.seconds.scales += since(t_scales);
    double sigma = 0.0;
    double final_threshold = current_threshold(settings, result.residual.pixels, &sigma, noise());
    double threshold = phase.threshold(final_threshold, sigma);
    if (phase.first_phase() && (choice.scale < 0 || choice.biased <= threshold)) {
      // --auto-mask: the unmasked phase is done; on inside the components' footprints. As in
      // WSClean, the local noise map is not used inside the mask.
      phase.switch_to_mask();
      if (weighing) {
        weighing = false;
        scale_images.set_weights(nullptr);
        result.local_rms.dropped_at_cycle = result.major_cycles + 1;
        final_threshold = current_threshold(settings, result.residual.pixels, &sigma);
      }
      std::vector<const HostImage*> kernels;
      for (const CleanScale& sc : scales) kernels.push_back(&sc.kernel);
      const auto masks = auto_masks(kernels, result.components, problem.mask, width, height);
      note_auto_mask(result, masks);
      scale_images.restrict(masks);
      t_scales = Clock::now();
      choice = scale_images.choose(result.residual.pixels, neg, settings.threads);
      if (multiscale) result.seconds.scales += since(t_scales);
      threshold = final_threshold;
    }
    // Multiscale: the divergence rule watches the residual's own peak (stop_rules.hpp).
    std::optional<float> residual_peak;
    if (multiscale) {
      const Peak p = scale_images.residual_peak(result.residual.pixels, neg, settings.threads);
      residual_peak = p.index < 0 ? 0.0f : (neg ? std::abs(p.value) : p.value);
    }
    if (!gate.open(result, choice.scale >= 0, choice.biased, threshold, sigma, total_flux(result.model.pixels),
                   last_candidates, residual_peak)) {
      break;
    }
    const auto b = static_cast<std::size_t>(choice.scale);
    const CleanScale& scale = scales[b];
    const std::vector<float>& scale_image = scale_images.image(choice, result.residual.pixels);
    const std::vector<std::uint8_t>& mask = scale_images.mask(b);
    const double peak = neg ? std::abs(choice.peak.value) : choice.peak.value;
    // Clark's limit (clark_cpu.hpp), in the scale image's units; bias and gain are 1 without
    // --multiscale.
    const double limit =
        std::max({result.threshold / scale.bias, static_cast<double>(scale.sidelobe) * choice.unweighted,
                  (1.0 - settings.mgain) * peak, multiscale ? (1.0 - settings.multiscale.gain) * peak : 0.0});

    // Active set: the brightest cleanable pixels of the scale's image above the limit.
    const auto t_select = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      masked[i] = mask[i] ? scale_image[i] : std::numeric_limits<float>::quiet_NaN();
    }
    const std::size_t above = select::count_keys_above_cpu(masked, static_cast<float>(limit), order);
    const std::size_t k = std::max<std::size_t>(1, std::min(settings.select_k, above));
    select::TopK top = select::top_k_cpu(masked, {k, order, false});
    active.clear();
    for (std::size_t j = 0; j < top.indices.size(); ++j) {
      const std::uint32_t i = top.indices[j];
      active.push_back({static_cast<std::int32_t>(i % width), static_cast<std::int32_t>(i / width), top.values[j],
                        weighing ? rms.weights[i] : 1.0f});
    }
    if (joined) joined->gather(b, scale_images, active, plane_values);
    last_candidates = active.size();
    result.seconds.select += since(t_select);

    const auto t_minor = Clock::now();
    const std::size_t first = result.components.size();
    minor.set_psf(scale.minor_psf, scale.patch);
    const std::size_t budget = settings.niter - result.iterations;
    const std::size_t made =
        joined ? minor.run_joined(active, plane_values, joined->minor(b), limit, settings.gain, neg, budget,
                                  &result.components, &result.plane_fluxes)
               : minor.run(active, limit, settings.gain, neg, budget, &result.components);
    result.iterations += made;
    result.seconds.minor += since(t_minor);
    if (made == 0) {  // the peak itself is at the limit: nothing more can be cleaned safely
      result.reason = StopReason::kThreshold;
      break;
    }

    // Major cycle: the components (x) K into the model, and through the full PSF out of the
    // residual. The per-pixel sums go through the kernel by FFT, as on the GPU.
    const auto t_conv = Clock::now();
    std::fill(delta.begin(), delta.end(), 0.0f);
    const bool delta_scale = scale_images.is_delta(b);
    for (std::size_t c = first; c < result.components.size(); ++c) {
      Component& comp = result.components[c];
      comp.scale = static_cast<std::uint32_t>(b);
      comp.flux /= scale.psf_peak;  // exact for the delta scale's 1
      const std::size_t i = static_cast<std::size_t>(comp.y) * width + comp.x;
      delta[i] += comp.flux;
      if (delta_scale) result.model.pixels[i] += comp.flux;
    }
    if (!delta_scale) {
      scale_images.convolve(b, delta.data());
      for (std::size_t i = 0; i < n; ++i) result.model.pixels[i] += delta[i];
    }
    if (joined) {  // every plane through its own PSF; the integrated residual remade from them
      const std::size_t np = problem.joined->planes.size();
      for (std::size_t i = first * np; i < result.plane_fluxes.size(); ++i) result.plane_fluxes[i] /= scale.psf_peak;
      joined->subtract(b, scale_images, result.components, first, result.plane_fluxes, result.residual);
    } else {
      psf_conv->convolve(delta.data(), delta.data());
      for (std::size_t i = 0; i < n; ++i) result.residual.pixels[i] -= delta[i];
    }
    result.seconds.convolve += since(t_conv);
  }
  result.scales = summarise_scales(scales, result.components);
  restore_if_asked(problem, settings.threads, result);
  if (joined) {
    const auto t_restore = Clock::now();
    joined->finish(problem.restoring_beam, settings.threads, result);
    result.seconds.restore += since(t_restore);
  }
  return result;
}

}  // namespace gpuclean::clean

#include "clean/gpu/clark_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "clean/auto_mask.hpp"
#include "clean/scale_set.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/joined_planes_gpu.hpp"
#include "clean/gpu/local_rms_gpu.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/gpu/scale_images_gpu.hpp"
#include "clean/gpu/scale_set_gpu.hpp"
#include "clean/stop_rules.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/select_comparison.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One minor cycle makes at most this many components; a longer cycle is split into major
// cycles (only with --mgain near 0 and a huge --niter).
constexpr std::size_t kMaxCycleComponents = 1u << 22;

// The beam patch: (2 hw + 1)^2 PSF values around the peak, 0 where the patch leaves the PSF
// (the CPU reference skips those offsets, which subtracts the same).
std::vector<float> beam_patch(const PreparedPsf& psf, std::size_t half_width) {
  const auto hw = static_cast<std::ptrdiff_t>(half_width), side = 2 * hw + 1;
  std::vector<float> patch(static_cast<std::size_t>(side * side), 0.0f);
  for (std::ptrdiff_t dy = -hw; dy <= hw; ++dy) {
    for (std::ptrdiff_t dx = -hw; dx <= hw; ++dx) {
      const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(psf.peak_x) + dx;
      const std::ptrdiff_t py = static_cast<std::ptrdiff_t>(psf.peak_y) + dy;
      if (px < 0 || py < 0 || px >= static_cast<std::ptrdiff_t>(psf.image.width) ||
          py >= static_cast<std::ptrdiff_t>(psf.image.height))
        continue;
      patch[static_cast<std::size_t>((dy + hw) * side + dx + hw)] =
          psf.image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
    }
  }
  return patch;
}

// (first component, scale) of each major cycle.
using CycleScales = std::vector<std::pair<std::size_t, std::uint32_t>>;

void assign_scales(const CycleScales& cycles, std::vector<Component>& components) {
  for (std::size_t c = 0; c < cycles.size(); ++c) {
    const std::size_t end = c + 1 < cycles.size() ? std::min(cycles[c + 1].first, components.size()) : components.size();
    for (std::size_t i = cycles[c].first; i < end; ++i) components[i].scale = cycles[c].second;
  }
}

std::vector<Component> components_so_far(gpu::GpuImageState& st, std::size_t count, const CycleScales& cycles) {
  const std::vector<std::uint32_t> pixels = st.component_pixels(count);
  std::vector<Component> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i].x = static_cast<std::uint32_t>(pixels[i] % st.width());
    out[i].y = static_cast<std::uint32_t>(pixels[i] / st.width());
  }
  assign_scales(cycles, out);
  return out;
}

}  // namespace

ClarkGpu::ClarkGpu() = default;
ClarkGpu::~ClarkGpu() = default;

CleanResult ClarkGpu::run(const CleanProblem& problem, const CleanSettings& settings, const CycleCallback& on_cycle) {
  const auto t_start = Clock::now();
  if (!resources_) resources_ = std::make_unique<gpu::GpuResources>();
  const gpu::GpuResources& stream = *resources_;
  const cudaStream_t s = stream.stream();
  // Joined planes: the peaks are searched on the integrated image (st's residual), the minor
  // and major cycles work on every plane, each through its own PSF (the integrated PSF's
  // transform is not needed).
  check_joinable(problem, settings);
  gpu::GpuImageState st(*resources_, problem, settings,
                        problem.joined ? gpu::PsfOnDevice::kNone : gpu::PsfOnDevice::kSpectrum);
  const std::size_t n = st.size();
  const bool neg = settings.allow_negative;
  const auto order = neg ? select::Order::kLargestAbs : select::Order::kLargest;
  const bool multiscale = settings.multiscale.enabled;

  // The scales (one delta function without --multiscale: plain Clark) and their beam patches.
  std::vector<CleanScale> scales =
      gpu::prepare_scales_gpu(*resources_, problem.psf, settings, multiscale ? beam_fwhm_pixels(problem) : 0.0,
                              st.width(), st.height(), st.exterior_sidelobe());
  const std::size_t k_max = std::min(settings.select_k, n);
  std::optional<gpu::JoinedPlanesGpu> joined;
  if (problem.joined) {
    joined.emplace(*resources_, *problem.joined, scales, st.width(), st.height(), k_max);
    for (std::size_t b = 0; b < scales.size(); ++b) scales[b].sidelobe = joined->sidelobe(b);
  }
  std::vector<cuda::DeviceBuffer<float>> patches;
  for (const CleanScale& sc : scales) {
    const std::vector<float> h_patch = beam_patch(sc.minor_psf, sc.patch);
    patches.emplace_back(h_patch.size(), s);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(patches.back().data(), h_patch.data(), h_patch.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, s));
  }
  gpu::ScaleImagesGpu scale_images(*resources_, st, scales);

  // The full PSF only for its transform (cached across runs); the minor cycles need the patch alone.
  std::optional<gpu::FftConvolverGpu> conv;
  if (!joined) conv.emplace(resources_->plans(), s, st.psf_spectrum());
  st.sample_memory();

  cuda::DeviceBuffer<float> active_values(k_max, s), sorted_values(k_max, s);
  cuda::DeviceBuffer<std::uint32_t> active_pixels(k_max, s), sorted_pixels(k_max, s);
  const std::size_t sort_bytes = gpu::sort_by_pixel_temp_bytes(k_max);
  cuda::DeviceBuffer<std::byte> sort_temp(std::max<std::size_t>(sort_bytes, 1), s);
  cuda::DeviceBuffer<unsigned long long> count(1, s);
  // Scales are smallest first, so the first patch is the narrowest (set_patch's rule).
  gpu::MinorCycleEngine minor(s, st.width(), st.height(), patches[0].data(), static_cast<int>(scales[0].patch), k_max,
                              std::min(settings.niter, kMaxCycleComponents));

  std::optional<gpu::SelectComparison> compare;
  if (settings.compare_select) compare.emplace(s, settings, k_max);

  CleanResult result;
  // --local-rms: the noise map of the residual (remade as local_rms.hpp says) and the peak
  // search's weights from it.
  gpu::LocalRmsDevice rms;
  bool weighing = settings.local_rms.enabled;
  const double rms_fwhm = weighing ? settings.local_rms.window * beam_fwhm_pixels(problem) : 0.0;
  auto remake_map = [&]() {
    const auto t_map = Clock::now();
    gpu::local_noise_gpu(s, st.residual(), st.width(), st.height(), settings.local_rms, rms_fwhm, rms);
    result.local_rms = {true, settings.local_rms.window, rms_fwhm, rms.min_rms, rms.max_rms, 0};
    scale_images.set_weights(rms.weights.data());
    st.sample_memory();
    result.seconds.noise_map += since(t_map);
  };
  CycleScales cycle_scales;
  result.seconds.setup = since(t_start);
  MajorCycleGate gate(settings, on_cycle);
  AutoMaskPhase phase(settings);
  std::vector<const HostImage*> kernels;
  for (const CleanScale& sc : scales) kernels.push_back(&sc.kernel);
  std::size_t last_candidates = 0;
  std::optional<float> map_peak;  // the residual's peak when the map was last made
  if (weighing) remake_map();
  while (true) {
    auto t_scales = Clock::now();
    gpu::ScaleImagesGpu::Choice choice = scale_images.choose();
    if (weighing) {  // the map is remade once the residual's peak has fallen by kLocalRmsRemakeFactor
      const Peak p = scale_images.residual_peak();
      const float peak_now = p.index < 0 ? 0.0f : (neg ? std::abs(p.value) : p.value);
      if (map_peak && peak_now <= kLocalRmsRemakeFactor * *map_peak) {
        remake_map();
        choice = scale_images.choose();
        map_peak = peak_now;
      }
      if (!map_peak) map_peak = peak_now;
    }
    if (multiscale) result.seconds.scales += since(t_scales);
    double sigma = 0.0;
    double final_threshold = st.threshold(&sigma, weighing ? std::optional<double>(rms.min_rms) : std::nullopt);
    double threshold = phase.threshold(final_threshold, sigma);
    if (phase.first_phase() && (choice.scale < 0 || choice.biased <= threshold)) {
      // --auto-mask: the unmasked phase is done; on inside the components' footprints (made on
      // the host, as the CPU makes them, from the components so far). As in WSClean, the local
      // noise map is not used inside the mask.
      phase.switch_to_mask();
      if (weighing) {
        weighing = false;
        scale_images.set_weights(nullptr);
        result.local_rms.dropped_at_cycle = result.major_cycles + 1;
        final_threshold = st.threshold(&sigma);
      }
      const auto masks = auto_masks(kernels, components_so_far(st, result.iterations, cycle_scales),
                                    problem.mask, st.width(), st.height());
      note_auto_mask(result, masks);
      scale_images.restrict(masks);
      t_scales = Clock::now();
      choice = scale_images.choose();
      if (multiscale) result.seconds.scales += since(t_scales);
      threshold = final_threshold;
    }
    // Multiscale: the divergence rule watches the residual's own peak (stop_rules.hpp).
    std::optional<float> residual_peak;
    if (multiscale) {
      const Peak p = scale_images.residual_peak();
      residual_peak = p.index < 0 ? 0.0f : (neg ? std::abs(p.value) : p.value);
    }
    if (!gate.open(result, choice.scale >= 0, choice.biased, threshold, sigma, st.model_flux(), last_candidates,
                   residual_peak)) {
      break;
    }
    const auto b = static_cast<std::size_t>(choice.scale);
    const CleanScale& scale = scales[b];
    const float* masked = scale_images.masked(choice);
    const double peak = neg ? std::abs(choice.peak.value) : choice.peak.value;
    const double limit =
        std::max({result.threshold / scale.bias, static_cast<double>(scale.sidelobe) * choice.unweighted,
                  (1.0 - settings.mgain) * peak, multiscale ? (1.0 - settings.multiscale.gain) * peak : 0.0});

    // Active set: the brightest cleanable pixels of the scale's image above the limit.
    auto t = Clock::now();
    unsigned long long above = 0;
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(count.data(), 0, sizeof above, s));
    gpu::count_above(s, masked, n, neg, static_cast<float>(limit), count.data());
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&above, count.data(), sizeof above, cudaMemcpyDeviceToHost, s));
    stream.synchronize();
    const std::size_t k = std::max<std::size_t>(1, std::min<std::size_t>(k_max, above));
    const select::SelectStats sel = st.selector().top_k(s, masked, n, {k, order, false}, st.workspace(),
                                                        active_values.data(), active_pixels.data());
    last_candidates = sel.count;
    if (compare) {
      const auto t_compare = Clock::now();
      result.select_comparison.push_back(
          compare->run(result.major_cycles, masked, n, {k, order, false}, active_pixels.data(), sel.count));
      t += Clock::now() - t_compare;  // not part of CLEAN's own selection time
    }
    gpu::sort_by_pixel(s, sort_temp.data(), sort_bytes, active_pixels.data(), sorted_pixels.data(),
                       active_values.data(), sorted_values.data(), sel.count, n);
    st.sample_memory();
    stream.synchronize();
    result.seconds.select += since(t);

    // Minor cycles: every independent cluster of the active set on its own SM or warp.
    t = Clock::now();
    const std::size_t budget = std::min(settings.niter - result.iterations, kMaxCycleComponents);
    st.reserve_components(result.iterations, budget);
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(st.scratch(), 0, n * sizeof(float), s));
    const bool delta_scale = scale_images.is_delta(b);
    minor.set_patch(patches[b].data(), static_cast<int>(scale.patch));
    gpu::MinorCycleRequest req;
    req.values = sorted_values.data();
    req.pixels = sorted_pixels.data();
    req.count = static_cast<std::uint32_t>(sel.count);
    req.limit = limit;
    req.gain = static_cast<float>(settings.gain);
    req.abs_key = neg;
    req.budget = static_cast<std::uint32_t>(budget);
    req.comp_pixels = st.comp_pixels() + result.iterations;
    req.comp_fluxes = st.comp_fluxes() + result.iterations;
    req.delta = st.scratch();
    req.model = delta_scale ? st.model() : nullptr;
    req.flux_divisor = scale.psf_peak;
    req.weights = weighing ? rms.weights.data() : nullptr;
    std::uint32_t h_made = 0;
    if (joined) {
      joined->reserve_components(result.iterations, budget);
      joined->gather(b, scale_images, sorted_pixels.data(), req.count);
      h_made = minor.run_joined(req, joined->request(b, result.iterations));
    } else {
      h_made = minor.run(req);
    }
    cycle_scales.emplace_back(result.iterations, static_cast<std::uint32_t>(b));
    result.iterations += h_made;
    result.seconds.minor += since(t);
    if (h_made == 0) {  // the peak itself is at the limit: nothing more can be cleaned safely
      result.reason = StopReason::kThreshold;
      break;
    }

    // Major cycle: the components (x) K into the model, and through the full PSF out of the residual.
    t = Clock::now();
    if (!delta_scale) scale_images.spread(b, st.scratch(), st.model());
    if (joined) {
      joined->subtract(b, scale_images, minor, result.iterations - h_made, st);
    } else {
      conv->convolve(st.scratch());
      conv->subtract_from(st.residual(), st.mask(), st.masked());
    }
    stream.synchronize();
    result.seconds.convolve += since(t);
  }
  result.minor_stats = minor.stats();
  if (problem.keep_noise_map && rms.map.size()) result.noise_map = gpu::download_map(s, rms, st.width(), st.height());
  rms = gpu::LocalRmsDevice();
  conv.reset();  // restoration needs the room
  st.finish(problem, result);
  if (joined) {
    const auto t_restore = Clock::now();
    joined->finish(problem.restoring_beam, result);
    result.seconds.restore += since(t_restore);
  }
  assign_scales(cycle_scales, result.components);
  result.scales = summarise_scales(scales, result.components);
  return result;
}

}  // namespace gpuclean::clean

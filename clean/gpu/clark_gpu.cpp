#include "clean/gpu/clark_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "clean/clark_cpu.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/minor_engine.hpp"
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

}  // namespace

ClarkGpu::ClarkGpu() = default;
ClarkGpu::~ClarkGpu() = default;

CleanResult ClarkGpu::run(const CleanProblem& problem, const CleanSettings& settings, const CycleCallback& on_cycle) {
  const auto t_start = Clock::now();
  if (!resources_) resources_ = std::make_unique<gpu::GpuResources>();
  const gpu::GpuResources& stream = *resources_;
  const cudaStream_t s = stream.stream();
  gpu::GpuImageState st(*resources_, problem, settings, gpu::PsfOnDevice::kSpectrum);
  const std::size_t n = st.size();
  const bool neg = settings.allow_negative;
  const auto order = neg ? select::Order::kLargestAbs : select::Order::kLargest;
  const float sidelobe = std::min(st.exterior_sidelobe(), 1.0f);

  // The full PSF only for its transform (cached across runs); the minor cycles need the patch alone.
  std::optional<gpu::FftConvolverGpu> conv;
  conv.emplace(resources_->plans(), s, st.psf_spectrum());
  st.sample_memory();
  const std::vector<float> h_patch = beam_patch(problem.psf, settings.beam_patch);
  cuda::DeviceBuffer<float> patch(h_patch.size(), s);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(patch.data(), h_patch.data(), h_patch.size() * 4, cudaMemcpyHostToDevice, s));

  const std::size_t k_max = std::min(settings.select_k, n);
  cuda::DeviceBuffer<float> active_values(k_max, s), sorted_values(k_max, s);
  cuda::DeviceBuffer<std::uint32_t> active_pixels(k_max, s), sorted_pixels(k_max, s);
  const std::size_t sort_bytes = gpu::sort_by_pixel_temp_bytes(k_max);
  cuda::DeviceBuffer<std::byte> sort_temp(std::max<std::size_t>(sort_bytes, 1), s);
  cuda::DeviceBuffer<unsigned long long> count(1, s);
  gpu::MinorCycleEngine minor(s, st.width(), st.height(), patch.data(), static_cast<int>(settings.beam_patch), k_max,
                              std::min(settings.niter, kMaxCycleComponents));

  std::optional<gpu::SelectComparison> compare;
  if (settings.compare_select) compare.emplace(s, settings, k_max);

  CleanResult result;
  result.seconds.setup = since(t_start);
  MajorCycleGate gate(settings, on_cycle);
  std::size_t last_candidates = 0;
  while (true) {
    const Peak peak = st.peak();
    double sigma = 0.0;
    const double threshold = st.threshold(&sigma);
    if (!gate.open(result, peak.index >= 0, peak.index >= 0 ? (neg ? std::abs(peak.value) : peak.value) : 0.0f,
                   threshold, sigma, st.model_flux(), last_candidates)) {
      break;
    }
    const double limit = std::max({result.threshold, static_cast<double>(sidelobe) * result.peak_residual,
                                   (1.0 - settings.mgain) * result.peak_residual});

    // Active set: the brightest cleanable pixels above the limit.
    auto t = Clock::now();
    unsigned long long above = 0;
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(count.data(), 0, sizeof above, s));
    gpu::count_above(s, st.masked(), n, neg, static_cast<float>(limit), count.data());
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&above, count.data(), sizeof above, cudaMemcpyDeviceToHost, s));
    stream.synchronize();
    const std::size_t k = std::max<std::size_t>(1, std::min<std::size_t>(k_max, above));
    const select::SelectStats sel = st.selector().top_k(s, st.masked(), n, {k, order, false}, st.workspace(),
                                                        active_values.data(), active_pixels.data());
    last_candidates = sel.count;
    if (compare) {
      const auto t_compare = Clock::now();
      result.select_comparison.push_back(
          compare->run(result.major_cycles, st.masked(), n, {k, order, false}, active_pixels.data(), sel.count));
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
    req.model = st.model();
    const std::uint32_t h_made = minor.run(req);
    result.iterations += h_made;
    result.seconds.minor += since(t);
    if (h_made == 0) {  // the peak itself is at the limit: nothing more can be cleaned safely
      result.reason = StopReason::kThreshold;
      break;
    }

    // Major cycle: subtract this cycle's components through the full PSF.
    t = Clock::now();
    conv->convolve(st.scratch());
    conv->subtract_from(st.residual(), st.mask(), st.masked());
    stream.synchronize();
    result.seconds.convolve += since(t);
  }
  result.minor_stats = minor.stats();
  conv.reset();  // restoration needs the room
  st.finish(problem, result);
  return result;
}

}  // namespace gpuclean::clean

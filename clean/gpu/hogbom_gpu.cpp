#include "clean/gpu/hogbom_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/minor_kernels.hpp"
#include "clean/stop_rules.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "select/cuda/event.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr std::size_t kMaxCycleComponents = 1u << 22;
// Launches queued between two looks at the stop flag: enough to hide the look, few enough that
// the launches queued after a stop (which return at once) cost little.
constexpr std::uint32_t kBatch = 256;

}  // namespace

HogbomGpu::HogbomGpu() = default;
HogbomGpu::~HogbomGpu() = default;

CleanResult HogbomGpu::run(const CleanProblem& problem, const CleanSettings& settings,
                           const CycleCallback& on_cycle) {
  check_joinable(problem, settings);  // Högbom refuses joined planes
  if (!resources_) resources_ = std::make_unique<gpu::GpuResources>();
  const gpu::GpuResources& stream = *resources_;
  const cudaStream_t s = stream.stream();
  gpu::GpuImageState st(*resources_, problem, settings);
  const bool neg = settings.allow_negative;
  const HostImage& psf = problem.psf.image;
  cuda::DeviceBuffer<float> d_psf(psf.size(), s);
  cuda::upload(resources_->staging(), s, d_psf.data(), psf.pixels.data(), psf.size());
  cuda::DeviceBuffer<unsigned long long> slots(3, s);
  cuda::DeviceBuffer<std::uint32_t> flags(2, s);  // stopped, made
  st.sample_memory();

  CleanResult result;
  MajorCycleGate gate(settings, on_cycle);
  while (true) {
    const Peak peak = st.peak();
    double sigma = 0.0;
    const double threshold = st.threshold(&sigma);
    if (!gate.open(result, peak.index >= 0, peak.index >= 0 ? (neg ? std::abs(peak.value) : peak.value) : 0.0f,
                   threshold, sigma, st.model_flux(), 0)) {
      break;
    }
    const double cycle_limit =
        std::max(result.threshold, (1.0 - settings.mgain) * static_cast<double>(result.peak_residual));
    const auto t = Clock::now();
    const auto budget =
        static_cast<std::uint32_t>(std::min(settings.niter - result.iterations, kMaxCycleComponents));
    st.reserve_components(result.iterations, budget);
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(slots.data(), 0, 3 * sizeof(unsigned long long), s));
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(flags.data(), 0, 2 * sizeof(std::uint32_t), s));
    gpu::find_peak(s, st.masked(), st.size(), neg, slots.data());

    gpu::HogbomStepArgs a;
    a.residual = st.residual();
    a.masked = st.masked();
    a.mask = st.mask();
    a.width = st.width();
    a.height = st.height();
    a.psf = d_psf.data();
    a.psf_width = psf.width;
    a.psf_height = psf.height;
    a.peak_x = problem.psf.peak_x;
    a.peak_y = problem.psf.peak_y;
    a.slots = slots.data();
    a.limit = cycle_limit;
    a.gain = static_cast<float>(settings.gain);
    a.abs_key = neg;
    a.budget = budget;
    a.comp_pixels = st.comp_pixels() + result.iterations;
    a.comp_fluxes = st.comp_fluxes() + result.iterations;
    a.model = st.model();
    a.stopped = flags.data();
    a.made = flags.data() + 1;
    std::uint32_t h_flags[2] = {0, 0};
    cuda::Event batch_done;
    for (std::uint32_t step = 0; step < budget;) {
      const std::uint32_t end = std::min(budget, step + kBatch);
      for (; step < end; ++step) gpu::hogbom_step(s, a, step);
      // As the minor engine does: no download queued behind the batch (it would hold a copy
      // engine's queue for the batch's length, and other workers' downloads with it).
      batch_done.record(s);
      batch_done.synchronize();
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(h_flags, flags.data(), sizeof h_flags, cudaMemcpyDeviceToHost, s));
      stream.synchronize();
      if (h_flags[0]) break;
    }
    result.iterations += h_flags[0] ? h_flags[1] : budget;
    result.seconds.minor += since(t);
  }
  d_psf = cuda::DeviceBuffer<float>();  // restoration needs the room
  st.finish(problem, result);
  return result;
}

}  // namespace gpuclean::clean

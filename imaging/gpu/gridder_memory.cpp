// The GPU gridder's memory plan (imaging-plan.md §4.6), checked before any work.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "clean/errors.hpp"
#include "imaging/gpu/fft_plan_pool.hpp"
#include "imaging/gpu/gridder_device.hpp"
#include "imaging/gpu/gridder_gpu.hpp"
#include "imaging/gpu/gridder_host.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::imaging {
namespace {

constexpr std::size_t kMinChunk = 256;  // fewer samples per chunk than this: refuse rather than crawl
// CUB's sort takes int counts and the records uint32 positions.
constexpr std::size_t kMaxChunk = (std::size_t{1} << 31) - 2;
// cuFFT's plan data, the CUDA context's own allocations, the pool's rounding of ~25 buffers.
constexpr std::size_t kSlack = std::size_t{64} << 20;

std::string size_text(std::size_t bytes) {
  char buf[32];
  if (bytes < (std::size_t{1} << 30))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1ull << 20));
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

}  // namespace

std::string GpuGridderMemory::describe() const {
  return "GPU gridder: " + size_text(fixed_bytes) + " fixed + " + std::to_string(per_sample_bytes) + " B per sample; " +
         std::to_string(chunks) + (chunks == 1 ? " chunk" : " chunks") + " of up to " + std::to_string(chunk_samples) +
         " samples within a budget of " + size_text(budget_bytes);
}

GpuGridderMemory plan_gpu_gridder_memory(const GridPlan& plan, std::size_t samples, std::size_t images,
                                         const GpuGridderOptions& options, GridderPass pass) {
  const bool invert = pass == GridderPass::kInvert;
  if (images < 1 || images > 2 || (!invert && images != 1))
    throw std::invalid_argument("plan_gpu_gridder_memory: 1 or 2 images to invert, 1 to predict");
  cuda::ScopedDevice device(options.device);
  const std::size_t cells = plan.nu * plan.nv, pixels = plan.image.width * plan.image.height;
  const gpu::FftPlanLease fft(plan.nu, plan.nv, static_cast<int>(images));
  // Grids, cuFFT's work area, the accumulators (invert) or the corrected model (predict), the
  // axis corrections.
  const std::size_t base = images * cells * sizeof(float2) + fft.work_bytes() + images * pixels * sizeof(double) +
                           (plan.image.width + plan.image.height) * sizeof(double) + kSlack;
  const std::size_t groups = plan.wstacking ? plan.planes : 1;

  GpuGridderMemory m;
  m.budget_bytes = gpu::imaging_budget(options);
  m.per_sample_bytes = gpu::ChunkWork::bytes_per_sample(invert, static_cast<int>(images));
  const std::size_t least = std::min(samples, kMinChunk);
  const std::size_t least_fixed = base + gpu::ChunkWork::bytes_besides(least, groups);
  if (least_fixed + least * m.per_sample_bytes > m.budget_bytes)
    throw clean::InsufficientGpuMemory(
        "imaging on the GPU needs at least " + size_text(least_fixed + least * m.per_sample_bytes) +
        " of GPU memory (" + std::to_string(images) + (images == 1 ? " grid" : " grids") + " of " +
        std::to_string(plan.nu) + "×" + std::to_string(plan.nv) + ", cuFFT's work area, " + std::to_string(images) +
        (images == 1 ? " image" : " images") + " of " + std::to_string(plan.image.width) + "×" +
        std::to_string(plan.image.height) + " in double), but only " + size_text(m.budget_bytes) +
        " are available on GPU " + std::to_string(options.device) +
        "; use a smaller image, a GPU with more memory or the CPU");
  // CUB's scratch grows with the chunk: size it for the largest chunk the rest allows.
  const std::size_t room = m.budget_bytes - least_fixed;
  const std::size_t widest = std::clamp(room / m.per_sample_bytes, least, std::max<std::size_t>(least, samples));
  const std::size_t fixed = base + gpu::ChunkWork::bytes_besides(std::min(widest, kMaxChunk), groups);
  m.fixed_bytes = fixed;
  m.chunk_samples = samples == 0 ? 0 : std::clamp(fixed < m.budget_bytes ? (m.budget_bytes - fixed) / m.per_sample_bytes : 0,
                                                  least, std::min(samples, kMaxChunk));
  m.chunks = m.chunk_samples == 0 ? 0 : (samples + m.chunk_samples - 1) / m.chunk_samples;
  return m;
}

}  // namespace gpuclean::imaging

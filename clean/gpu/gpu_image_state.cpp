#include "clean/gpu/gpu_image_state.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "clean/errors.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/packed_peak.hpp"
#include "clean/quantiles.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/device_info.hpp"
#include "select/registry.hpp"

namespace gpuclean::clean::gpu {
namespace {

std::unique_ptr<select::Selector> make_selector(const std::string& name) {
  const auto& reg = select::builtin_registry();
  std::string valid;
  for (const std::string& n : reg.names()) {
    if (n == "cpu") continue;
    auto s = reg.make(n);
    if (!s->exact()) continue;
    if (n == name) return s;
    valid += (valid.empty() ? "" : ", ") + n;
  }
  throw InvalidSettings("--select " + name + " is not an exact GPU selection backend; use one of: " + valid + ".");
}

template <class T>
void upload(cudaStream_t s, T* dst, const T* src, std::size_t count) {
  if (count) GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyHostToDevice, s));
}

template <class T>
void download_to(cudaStream_t s, T* dst, const T* src, std::size_t count) {
  if (count) GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyDeviceToHost, s));
}

std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

}  // namespace

GpuImageState::GpuImageState(GpuResources& resources, const CleanProblem& problem, const CleanSettings& settings)
    : resources_(resources),
      stream_(resources.stream()),
      settings_(settings),
      width_(problem.dirty.width),
      height_(problem.dirty.height),
      workspace_(resources.stream()) {
  if (size() >= kMaxPackedPixels || width_ >= (1u << 16) || height_ >= (1u << 16))
    throw InvalidInput("the GPU path takes images below 65536 pixels a side and 2^31 pixels; use --device cpu.");
  free_at_start_ = cuda::device_memory().free_bytes;
  selector_ = make_selector(settings.select_backend);
  const std::size_t n = size();
  residual_ = cuda::DeviceBuffer<float>(n, stream_);
  masked_ = cuda::DeviceBuffer<float>(n, stream_);
  model_ = cuda::DeviceBuffer<float>(n, stream_);
  scratch_ = cuda::DeviceBuffer<float>(n, stream_);
  mask_ = cuda::DeviceBuffer<std::uint8_t>(n, stream_);
  scalars_ = cuda::DeviceBuffer<unsigned long long>(4, stream_);
  sums_ = cuda::DeviceBuffer<double>(2, stream_);
  upload(stream_, residual_.data(), problem.dirty.pixels.data(), n);
  upload(stream_, mask_.data(), problem.mask.data(), n);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(model_.data(), 0, n * sizeof(float), stream_));
  apply_mask(stream_, residual_.data(), mask_.data(), masked_.data(), n);
  n_finite_ = 0;
  for (float v : problem.dirty.pixels) n_finite_ += std::isfinite(v);
  sample_memory();
}

Peak GpuImageState::peak() {
  unsigned long long packed = 0;
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(scalars_.data(), 0, sizeof(unsigned long long), stream_));
  find_peak(stream_, masked_.data(), size(), settings_.allow_negative, scalars_.data());
  download_to(stream_, &packed, scalars_.data(), 1);
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
  Peak p;
  if (packed == 0) return p;
  const UnpackedPeak u = unpack_peak(packed, settings_.allow_negative);
  if (!settings_.allow_negative && !(u.key > 0.0f)) return p;  // as find_peak: positive peaks only
  p.index = static_cast<std::ptrdiff_t>(u.pixel);
  p.value = u.value;
  return p;
}

double GpuImageState::threshold(double* sigma) {
  *sigma = 0.0;
  double t = settings_.threshold;
  if (settings_.auto_threshold > 0.0 && n_finite_ > 0) {
    // 1.4826 x MAD over the finite pixels, as clean::robust_sigma, with the selection library.
    const std::size_t mid = (n_finite_ - 1) / 2;
    finite_copy(stream_, residual_.data(), scratch_.data(), size());
    float median = 0.0f, mad = 0.0f;
    selector_->order_statistics(stream_, scratch_.data(), size(), {mid}, workspace_, &median);
    abs_deviation(stream_, scratch_.data(), size(), median);
    selector_->order_statistics(stream_, scratch_.data(), size(), {mid}, workspace_, &mad);
    *sigma = 1.4826 * static_cast<double>(mad);
    t = std::max(t, settings_.auto_threshold * *sigma);
    sample_memory();
  }
  return t;
}

double GpuImageState::model_flux() {
  double sums[2] = {0.0, 0.0};
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(sums_.data(), 0, 2 * sizeof(double), stream_));
  finite_sums(stream_, model_.data(), size(), sums_.data());
  download_to(stream_, sums, sums_.data(), 2);
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
  return sums[0];
}

void GpuImageState::reserve_components(std::size_t used, std::size_t more) {
  if (used + more <= comp_pixels_.size()) return;
  const std::size_t capacity = std::max(used + more, 2 * comp_pixels_.size());
  cuda::DeviceBuffer<std::uint32_t> pixels(capacity, stream_);
  cuda::DeviceBuffer<float> fluxes(capacity, stream_);
  if (used) {
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(pixels.data(), comp_pixels_.data(), used * 4, cudaMemcpyDeviceToDevice, stream_));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(fluxes.data(), comp_fluxes_.data(), used * 4, cudaMemcpyDeviceToDevice, stream_));
  }
  comp_pixels_ = std::move(pixels);
  comp_fluxes_ = std::move(fluxes);
  sample_memory();
}

void GpuImageState::finish(const CleanProblem& problem, CleanResult& result) {
  download(result, result.iterations);
  if (problem.restoring_beam) {
    const auto t0 = std::chrono::steady_clock::now();
    restore(problem, result);
    result.seconds.restore = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  result.peak_gpu_bytes = peak_memory();
}

void GpuImageState::download(CleanResult& result, std::size_t iterations) {
  const std::size_t n = size();
  result.residual = HostImage(width_, height_);
  result.model = HostImage(width_, height_);
  download_to(stream_, result.residual.pixels.data(), residual_.data(), n);
  download_to(stream_, result.model.pixels.data(), model_.data(), n);
  std::vector<std::uint32_t> pixels(iterations);
  std::vector<float> fluxes(iterations);
  download_to(stream_, pixels.data(), comp_pixels_.data(), iterations);
  download_to(stream_, fluxes.data(), comp_fluxes_.data(), iterations);
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
  result.components.resize(iterations);
  for (std::size_t i = 0; i < iterations; ++i) {
    result.components[i] = {static_cast<std::uint32_t>(pixels[i] % width_),
                            static_cast<std::uint32_t>(pixels[i] / width_), fluxes[i]};
  }
}

void GpuImageState::restore(const CleanProblem& problem, CleanResult& result) {
  const HostImage kernel = gaussian_kernel(*problem.restoring_beam, 2 * width_ - 1, 2 * height_ - 1);
  cuda::DeviceBuffer<float> d_kernel(kernel.size(), stream_);
  upload(stream_, d_kernel.data(), kernel.pixels.data(), kernel.size());
  FftConvolverGpu conv(resources_.plans(), stream_, d_kernel.data(), kernel.width, kernel.height, kernel.width / 2, kernel.height / 2,
                       width_, height_);
  // The masked buffer is free once CLEAN is done: the restored image goes there.
  conv.convolve(model_.data());
  conv.add_to(residual_.data(), masked_.data());
  sample_memory();
  result.restored = HostImage(width_, height_);
  download_to(stream_, result.restored.pixels.data(), masked_.data(), size());
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
  if (!problem.restored_quantiles.empty()) {
    std::size_t n_valid = 0;
    for (float v : result.restored.pixels) n_valid += !std::isnan(v);
    const auto ranks = quantile_ranks(problem.restored_quantiles, n_valid);
    if (!ranks.empty()) {
      result.restored_quantile_values.resize(ranks.size());
      selector_->order_statistics(stream_, masked_.data(), size(), ranks, workspace_,
                                  result.restored_quantile_values.data());
    }
  }
}

void GpuImageState::sample_memory() {
  const std::size_t free_now = cuda::device_memory().free_bytes;
  if (free_at_start_ > free_now) peak_used_ = std::max(peak_used_, free_at_start_ - free_now);
}

std::size_t gpu_bytes_needed(std::size_t width, std::size_t height, std::size_t psf_width, std::size_t psf_height,
                             const CleanSettings& settings) {
  const std::size_t n = width * height;
  const std::size_t k = std::min(settings.select_k, n);
  std::size_t images = n * (4 * sizeof(float) + 1);  // residual, masked, model, scratch, mask
  std::size_t psf = psf_width * psf_height * sizeof(float);
  std::size_t conv = FftConvolverGpu::bytes_needed(psf_width, psf_height, psf_width / 2, psf_height / 2, width, height);
  std::size_t select = 0;
  auto sel = make_selector(settings.select_backend);
  select = std::max(sel->top_k_workspace_bytes(n, k), sel->order_statistics_workspace_bytes(n, 1));
  // Clark: the active set and its pixel-sorted copy, their sort, and the minor-cycle engine.
  std::size_t clark = 0;
  if (settings.algorithm == Algorithm::kClark) {
    clark = k * 16 + sort_by_pixel_temp_bytes(k) +
            MinorCycleEngine::bytes_needed(width, height, static_cast<int>(settings.beam_patch), k,
                                           std::min<std::size_t>(settings.niter, 1u << 22));
  }
  std::size_t comps = std::min<std::size_t>(settings.niter, 1u << 20) * 8 * 2;
  const std::size_t slack = 64u << 20;  // CUDA context allocations, cuFFT plans, alignment
  return images + psf + conv + select + clark + comps + slack;
}

void check_gpu_memory(std::size_t width, std::size_t height, std::size_t psf_width, std::size_t psf_height,
                      const CleanSettings& settings) {
  const std::size_t need = gpu_bytes_needed(width, height, psf_width, psf_height, settings);
  const std::size_t free_bytes = cuda::device_memory().free_bytes;
  if (need > free_bytes) {
    throw InsufficientGpuMemory("a " + std::to_string(width) + "x" + std::to_string(height) + " image needs " +
                                gib(need) + " of GPU memory but " + gib(free_bytes) + " is free on " +
                                cuda::describe_device() +
                                "; use --device cpu (or auto), a smaller image, or a GPU with more memory.");
  }
}

}  // namespace gpuclean::clean::gpu

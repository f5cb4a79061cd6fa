#include "clean/gpu/gpu_image_state.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "clean/errors.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/local_rms_gpu.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/gpu/plane_set_gpu.hpp"
#include "clean/gpu/scale_images_gpu.hpp"
#include "clean/packed_peak.hpp"
#include "clean/quantiles.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/device_info.hpp"
#include "select/cuda/event.hpp"
#include "select/cuda/pinned_staging.hpp"
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

// Small transfers (a few scalars): pageable memory, the stream's own order.
template <class T>
void download_to(cudaStream_t s, T* dst, const T* src, std::size_t count) {
  if (count) GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyDeviceToHost, s));
}

std::uint64_t bits_of(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }


}  // namespace

GpuImageState::GpuImageState(GpuResources& resources, const CleanProblem& problem, const CleanSettings& settings,
                             PsfOnDevice psf)
    : resources_(resources),
      stream_(resources.stream()),
      problem_(problem),
      settings_(settings),
      width_(problem.dirty.width),
      height_(problem.dirty.height),
      workspace_(resources.stream()) {
  if (size() >= kMaxPackedPixels || width_ >= (1u << 16) || height_ >= (1u << 16))
    throw InvalidInput("the GPU path takes images below 65536 pixels a side and 2^31 pixels; use --device cpu.");
  if (problem.mask.size() != size()) throw std::invalid_argument("GpuImageState: the mask is not the image's size");
  auto lap = Clock::now();
  const auto took = [&lap] {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - lap).count();
    lap = now;
    return s;
  };
  free_at_start_ = cuda::device_memory().free_bytes;
  memory_query_seconds_ += took();
  selector_ = make_selector(settings.select_backend);
  host_residual_ = std::make_unique<HostImagePrefetch>(width_, height_);
  host_model_ = std::make_unique<HostImagePrefetch>(width_, height_);
  if (problem.restoring_beam) host_restored_ = std::make_unique<HostImagePrefetch>(width_, height_);
  setup_.host_images = took();
  // The PSF first: its transform (on the side stream) then overlaps the uploads below.
  if (psf == PsfOnDevice::kSpectrum && !problem.joined) psf_spectrum_ = fetch_psf_spectrum(problem.psf);
  setup_.psf = took();
  const std::size_t n = size();
  residual_ = cuda::DeviceBuffer<float>(n, stream_);
  masked_ = cuda::DeviceBuffer<float>(n, stream_);
  model_ = cuda::DeviceBuffer<float>(n, stream_);
  scratch_ = cuda::DeviceBuffer<float>(n, stream_);
  mask_ = cuda::DeviceBuffer<std::uint8_t>(n, stream_);
  scalars_ = cuda::DeviceBuffer<unsigned long long>(4, stream_);
  sums_ = cuda::DeviceBuffer<double>(2, stream_);
  counts_ = cuda::DeviceBuffer<unsigned long long>(2, stream_);
  setup_.allocations = took();
  cuda::PinnedStaging& staging = resources_.staging();
  if (const DeviceImage* d = problem.dirty_on_device) {
    // A caller's CUDA array: copied on the device once the caller's stream has made it.
    cuda::Event ready;
    ready.record(reinterpret_cast<cudaStream_t>(d->stream));
    ready.wait_on(stream_);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(residual_.data(), d->data, n * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  } else {
    cuda::upload(staging, stream_, residual_.data(), problem.dirty.pixels.data(), n);
  }
  cuda::upload(staging, stream_, mask_.data(), problem.mask.data(), n);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(model_.data(), 0, n * sizeof(float), stream_));
  apply_mask(stream_, residual_.data(), mask_.data(), masked_.data(), n);
  // The noise estimate's pixel count, on the device; read back when first needed.
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(counts_.data(), 0, 2 * sizeof(unsigned long long), stream_));
  count_valid(stream_, residual_.data(), n, true, counts_.data());
  sample_memory();
  setup_.uploads = took();
}

GpuImageState::~GpuImageState() = default;

std::shared_ptr<const Spectrum> GpuImageState::fetch_psf_spectrum(const PreparedPsf& psf) {
  const HostImage& image = psf.image;
  const cudaStream_t side = resources_.side_stream();
  // Both live on the side stream only, so they are freed there after the transform read them.
  cuda::DeviceBuffer<float> d_psf(image.size(), side);
  cuda::DeviceBuffer<unsigned long long> d_hash(3, side);  // the hash, then the exterior sidelobe's bits
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(d_hash.data(), 0, 3 * sizeof(unsigned long long), side));
  cuda::upload(resources_.staging(), side, d_psf.data(), image.pixels.data(), image.size());
  static_assert(sizeof(float) == sizeof(std::uint32_t));
  content_hash(side, reinterpret_cast<const std::uint32_t*>(d_psf.data()), image.size(), d_hash.data());
  // Clark's largest exterior sidelobe, while the PSF is here: a pass on the device instead of one
  // on the host (a quarter of a second at 16384^2).
  abs_max_outside(side, d_psf.data(), image.width, image.height, psf.peak_x, psf.peak_y, settings_.beam_patch,
                  d_hash.data() + 2);
  unsigned long long hash[3] = {0, 0, 0};
  cuda::download(resources_.staging(), side, hash, d_hash.data(), 3);
  const auto bits = static_cast<std::uint32_t>(hash[2]);
  std::memcpy(&exterior_sidelobe_, &bits, sizeof bits);

  SpectrumKey key;
  key.content = {hash[0], hash[1], 0};
  key.kernel_width = image.width;
  key.kernel_height = image.height;
  key.cx = psf.peak_x;
  key.cy = psf.peak_y;
  key.width = width_;
  key.height = height_;
  SpectrumCache& cache = resources_.psf_spectra();
  if (auto hit = cache.find(key)) return hit;
  cache.make_room();
  std::shared_ptr<const Spectrum> s = kernel_spectrum(resources_.side_plans(), side, stream_, d_psf.data(), image.width,
                                                      image.height, psf.peak_x, psf.peak_y, width_, height_);
  cache.insert(key, s);
  return s;
}

std::size_t GpuImageState::finite_pixels() {
  if (!n_finite_) {
    unsigned long long n = 0;
    download_to(stream_, &n, counts_.data(), 1);
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
    n_finite_ = static_cast<std::size_t>(n);
  }
  return *n_finite_;
}

Peak GpuImageState::peak_of(const float* masked) {
  unsigned long long packed = 0;
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(scalars_.data(), 0, sizeof(unsigned long long), stream_));
  find_peak(stream_, masked, size(), settings_.allow_negative, scalars_.data());
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

void GpuImageState::set_residual(const float* residual) {
  cuda::upload(resources_.staging(), stream_, residual_.data(), residual, size());
  residual_changed();
}

void GpuImageState::residual_changed() {
  const std::size_t n = size();
  apply_mask(stream_, residual_.data(), mask_.data(), masked_.data(), n);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(counts_.data(), 0, sizeof(unsigned long long), stream_));
  count_valid(stream_, residual_.data(), n, true, counts_.data());
  n_finite_.reset();
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
}

HostImage GpuImageState::model_image() { return image_of(model_.data()); }
HostImage GpuImageState::residual_image() { return image_of(residual_.data()); }

HostImage GpuImageState::image_of(const float* device_image) {
  HostImage out(width_, height_);
  cuda::download(resources_.staging(), stream_, out.pixels.data(), device_image, size());
  return out;
}

void GpuImageState::restrict_mask(const std::vector<std::uint8_t>& mask) {
  cuda::upload(resources_.staging(), stream_, mask_.data(), mask.data(), size());
  apply_mask(stream_, residual_.data(), mask_.data(), masked_.data(), size());
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
}

double GpuImageState::robust_sigma() {
  if (finite_pixels() == 0) return 0.0;
  // 1.4826 x MAD over the finite pixels, as clean::robust_sigma: one selection-library call.
  const select::RobustStats r = selector_->robust_statistics(stream_, residual_.data(), size(), workspace_);
  sample_memory();
  return 1.4826 * static_cast<double>(r.mad);
}

NoiseMapRange GpuImageState::make_noise_map(const LocalRmsSettings& local, double window_fwhm_pixels) {
  local_noise_gpu(stream_, residual_.data(), width_, height_, local, window_fwhm_pixels, rms_);
  weighing_ = true;
  sample_memory();
  return {rms_.min_rms, rms_.max_rms};
}

// Made on the host, as the CPU makes them, from the components so far.
std::vector<Component> GpuImageState::components(std::size_t count) {
  const std::vector<std::uint32_t> pixels = component_pixels(count);
  std::vector<Component> out(pixels.size());
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    out[i].x = static_cast<std::uint32_t>(pixels[i] % width_);
    out[i].y = static_cast<std::uint32_t>(pixels[i] / width_);
  }
  return out;
}

PlaneSetGpu& GpuImageState::plan(std::vector<CleanScale>& scales, std::size_t max_members) {
  planes_ = std::make_unique<PlaneSetGpu>(resources_, *this, problem_, scales, max_members);
  return *planes_;
}

// Without a plane set (an algorithm that never subtracts through the PSF), one plane.
void GpuImageState::set_residuals(const std::vector<const float*>& planes) {
  if (planes_) return planes_->set_residuals(planes);
  set_residual(only_plane(planes));
}

std::vector<HostImage> GpuImageState::model_images() {
  return planes_ ? planes_->model_images() : std::vector{model_image()};
}

std::vector<HostImage> GpuImageState::residual_images() {
  return planes_ ? planes_->residual_images() : std::vector{residual_image()};
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

void GpuImageState::finish(CleanResult& result) {
  const CleanProblem& problem = problem_;
  if (problem.keep_noise_map && rms_.map.size()) result.images.noise_map = download_map(stream_, rms_, width_, height_);
  rms_ = LocalRmsDevice();
  if (planes_) planes_->release();  // restoration needs the room
  const auto t0 = Clock::now();
  // CLEAN is done: the side stream may read its results while the main stream restores.
  cuda::Event cleaned;
  cleaned.record(stream_);
  cleaned.wait_on(resources_.side_stream());
  if (problem.restoring_beam) enqueue_restore(*problem.restoring_beam);
  const auto t_download = Clock::now();
  download(resources_.side_stream(), result, result.stop.iterations);
  const double download_seconds = since(t_download);
  result.diagnostics.seconds.download = download_seconds;
  if (problem.restoring_beam) {
    finish_restore(problem, result);
    // What the restoration added to the run: its own work, not the downloads it overlapped.
    result.diagnostics.seconds.restore = std::max(0.0, since(t0) - download_seconds);
  }
  result.diagnostics.peak_gpu_bytes = peak_memory();
  if (planes_) planes_->finish(result);
}

void GpuImageState::download(cudaStream_t stream, CleanResult& result, std::size_t iterations) {
  const std::size_t n = size();
  cuda::PinnedStaging& staging = resources_.staging();
  result.images.residual = host_residual_->take();
  result.images.model = host_model_->take();
  cuda::download(staging, stream, result.images.residual.pixels.data(), residual_.data(), n);
  cuda::download(staging, stream, result.images.model.pixels.data(), model_.data(), n);
  std::vector<std::uint32_t> pixels(iterations);
  std::vector<float> fluxes(iterations);
  cuda::download(staging, stream, pixels.data(), comp_pixels_.data(), iterations);
  cuda::download(staging, stream, fluxes.data(), comp_fluxes_.data(), iterations);
  result.components.list.resize(iterations);
  for (std::size_t i = 0; i < iterations; ++i) {
    result.components.list[i] = {static_cast<std::uint32_t>(pixels[i] % width_),
                            static_cast<std::uint32_t>(pixels[i] / width_), fluxes[i]};
  }
}

std::vector<std::uint32_t> GpuImageState::component_pixels(std::size_t count) {
  std::vector<std::uint32_t> pixels(count);
  cuda::download(resources_.staging(), stream_, pixels.data(), comp_pixels_.data(), count);
  return pixels;
}

void GpuImageState::enqueue_restore(const PixelGaussian& beam) {
  const KernelHalfSize half = gaussian_kernel_half_size(beam, 2 * width_ - 1, 2 * height_ - 1);
  SpectrumKey key;
  key.content = {bits_of(beam.cxx), bits_of(beam.cxy), bits_of(beam.cyy)};
  key.kernel_width = 2 * half.half_width + 1;
  key.kernel_height = 2 * half.half_height + 1;
  key.cx = half.half_width;
  key.cy = half.half_height;
  key.width = width_;
  key.height = height_;
  SpectrumCache& cache = resources_.beam_spectra();
  std::shared_ptr<const Spectrum> spectrum = cache.find(key);
  if (!spectrum) {
    cache.make_room();
    spectrum = gaussian_spectrum(resources_.plans(), stream_, beam, width_, height_);
    cache.insert(key, spectrum);
  }
  // Its buffer is freed in stream order when it goes out of scope, after the work below.
  FftConvolverGpu conv(resources_.plans(), stream_, spectrum);
  // The masked buffer is free once CLEAN is done: the restored image goes there.
  conv.convolve(model_.data());
  conv.add_to(residual_.data(), masked_.data());
  sample_memory();
}

void GpuImageState::finish_restore(const CleanProblem& problem, CleanResult& result) {
  const std::size_t n = size();
  const std::vector<double> quantiles = problem.observer ? problem.observer->restored_quantiles() : std::vector<double>{};
  if (!quantiles.empty()) count_valid(stream_, masked_.data(), n, false, counts_.data() + 1);
  result.images.restored = host_restored_->take();
  cuda::download(resources_.staging(), stream_, result.images.restored.pixels.data(), masked_.data(), n);
  if (!quantiles.empty()) {
    unsigned long long n_valid = 0;
    download_to(stream_, &n_valid, counts_.data() + 1, 1);
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
    const auto ranks = quantile_ranks(quantiles, static_cast<std::size_t>(n_valid));
    if (!ranks.empty()) {
      std::vector<float> values(ranks.size());
      selector_->order_statistics(stream_, masked_.data(), size(), ranks, workspace_, values.data());
      problem.observer->restored_quantiles_taken(values);
    }
  }
}

void GpuImageState::sample_memory() {
  const auto t0 = Clock::now();
  const std::size_t free_now = cuda::device_memory().free_bytes;
  memory_query_seconds_ += since(t0);
  if (free_at_start_ > free_now) peak_used_ = std::max(peak_used_, free_at_start_ - free_now);
}

}  // namespace gpuclean::clean::gpu

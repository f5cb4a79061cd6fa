#include "clean/gpu/fft_convolver_gpu.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "clean/fft_convolver_cpu.hpp"

namespace gpuclean::clean::gpu {
namespace {

struct Geometry {
  PaddedLayout layout;
  KernelPlacement placement;
};

// The same offsets and padding as FftConvolverCpu: only |d| < size reaches an output pixel.
Geometry geometry(std::size_t kw, std::size_t kh, std::size_t cx, std::size_t cy, std::size_t width,
                  std::size_t height) {
  Geometry g;
  const auto w = static_cast<std::ptrdiff_t>(width), h = static_cast<std::ptrdiff_t>(height);
  KernelPlacement& k = g.placement;
  k.kernel_width = kw;
  k.cx = static_cast<std::ptrdiff_t>(cx);
  k.cy = static_cast<std::ptrdiff_t>(cy);
  k.dx_min = std::max(-k.cx, -(w - 1));
  k.dx_max = std::min(static_cast<std::ptrdiff_t>(kw) - 1 - k.cx, w - 1);
  k.dy_min = std::max(-k.cy, -(h - 1));
  k.dy_max = std::min(static_cast<std::ptrdiff_t>(kh) - 1 - k.cy, h - 1);
  PaddedLayout& l = g.layout;
  l.width = width;
  l.height = height;
  l.pw = fft_friendly_size(width + static_cast<std::size_t>(std::max(k.dx_max, -k.dx_min)));
  l.ph = fft_friendly_size(height + static_cast<std::size_t>(std::max(k.dy_max, -k.dy_min)));
  l.pitch = 2 * (l.pw / 2 + 1);
  k.scale = 1.0f / static_cast<float>(l.pw * l.ph);
  return g;
}

// The restoring kernel's grid, as restore_cpu() asks gaussian_kernel() for it.
KernelHalfSize restoring_half_size(const PixelGaussian& g, std::size_t width, std::size_t height) {
  return gaussian_kernel_half_size(g, 2 * width - 1, 2 * height - 1);
}

void set_padded_size(Geometry& g, std::size_t pw, std::size_t ph) {
  g.layout.pw = pw;
  g.layout.ph = ph;
  g.layout.pitch = 2 * (pw / 2 + 1);
  g.placement.scale = 1.0f / static_cast<float>(pw * ph);
}

// The restoring beam's grid, padded at least as a centred kernel of the image's size is (the
// usual PSF's layout): every ordinary beam of one image size then shares one layout and one
// pair of cuFFT plans. With a layout per beam, a cube whose channels have their own beams made
// a plan per channel, and making or dropping a plan waited for the whole device, every other
// worker's minor cycle included.
Geometry restoring_geometry(const PixelGaussian& g, std::size_t width, std::size_t height) {
  const KernelHalfSize half = restoring_half_size(g, width, height);
  Geometry geo = geometry(2 * half.half_width + 1, 2 * half.half_height + 1, half.half_width, half.half_height,
                          width, height);
  const PaddedLayout wide = geometry(width, height, width / 2, height / 2, width, height).layout;
  set_padded_size(geo, std::max(geo.layout.pw, wide.pw), std::max(geo.layout.ph, wide.ph));
  return geo;
}

std::size_t layout_spectrum_bytes(const PaddedLayout& l) { return l.ph * (l.pw / 2 + 1) * sizeof(cufftComplex); }

// Asked once a process for each padded size: cufftEstimate2d took about 44 ms a call on the
// H200, and while it ran every other worker on the device was held up. A batch's memory check
// asked it twice an observation, which cost 84 ms an observation and slowed the other workers'
// minor cycles from 138 to 188 ms (4 streams): the batch ran at 10 instead of 16 observations/s.
std::size_t layout_work_bytes(const PaddedLayout& l) {
  static std::mutex mutex;
  static std::map<std::pair<std::size_t, std::size_t>, std::size_t> known;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(l.pw, l.ph);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  std::size_t work = 0;
  check_cufft(cufftEstimate2d(static_cast<int>(l.ph), static_cast<int>(l.pw), CUFFT_R2C, &work), "cufftEstimate2d");
  known.emplace(key, work);
  return work;
}

// In place, as every transform here: cuFFT reads padded rows only when input and output alias.
void forward_in_place(FftPlans& plans, Spectrum& s) {
  check_cufft(cufftExecR2C(plans.forward, reinterpret_cast<float*>(s.data()), s.data()), "cufftExecR2C (kernel)");
}

}  // namespace

PaddedLayout padded_layout(std::size_t kw, std::size_t kh, std::size_t cx, std::size_t cy, std::size_t width,
                           std::size_t height) {
  return geometry(kw, kh, cx, cy, width, height).layout;
}

std::shared_ptr<Spectrum> kernel_spectrum(FftPlanCache& plans, cudaStream_t compute, cudaStream_t release,
                                          const float* kernel, std::size_t kw, std::size_t kh, std::size_t cx,
                                          std::size_t cy, std::size_t width, std::size_t height) {
  const Geometry g = geometry(kw, kh, cx, cy, width, height);
  const std::shared_ptr<FftPlans> p = plans.get(compute, g.layout.pw, g.layout.ph);
  auto s = std::make_shared<Spectrum>(g.layout, compute, release);
  KernelPlacement k = g.placement;
  k.kernel = kernel;
  place_kernel(compute, k, g.layout, reinterpret_cast<float*>(s->data()));
  forward_in_place(*p, *s);
  s->mark_ready(compute);
  return s;
}

GaussianPlacement gaussian_placement(const PixelGaussian& g, std::size_t width, std::size_t height,
                                     const PaddedLayout& layout) {
  const KernelHalfSize half = restoring_half_size(g, width, height);
  GaussianPlacement p;
  p.cxx = g.cxx;
  p.cxy = g.cxy;
  p.cyy = g.cyy;
  p.det = g.cxx * g.cyy - g.cxy * g.cxy;  // as PixelGaussian::value computes it
  p.half_width = static_cast<std::ptrdiff_t>(half.half_width);
  p.half_height = static_cast<std::ptrdiff_t>(half.half_height);
  p.scale = 1.0f / static_cast<float>(layout.pw * layout.ph);
  return p;
}

std::shared_ptr<Spectrum> gaussian_spectrum(FftPlanCache& plans, cudaStream_t stream, const PixelGaussian& g,
                                            std::size_t width, std::size_t height) {
  // The grid gaussian_kernel() would return, centred: every offset of it reaches the image.
  const Geometry geo = restoring_geometry(g, width, height);
  const std::shared_ptr<FftPlans> p = plans.get(stream, geo.layout.pw, geo.layout.ph);
  auto s = std::make_shared<Spectrum>(geo.layout, stream, stream);
  place_gaussian(stream, gaussian_placement(g, width, height, geo.layout), geo.layout,
                 reinterpret_cast<float*>(s->data()));
  forward_in_place(*p, *s);
  s->mark_ready(stream);
  return s;
}

std::size_t FftConvolverGpu::spectrum_bytes(std::size_t kw, std::size_t kh, std::size_t cx, std::size_t cy,
                                            std::size_t width, std::size_t height) {
  return layout_spectrum_bytes(geometry(kw, kh, cx, cy, width, height).layout);
}

std::size_t FftConvolverGpu::work_bytes(std::size_t kw, std::size_t kh, std::size_t cx, std::size_t cy,
                                        std::size_t width, std::size_t height) {
  return layout_work_bytes(geometry(kw, kh, cx, cy, width, height).layout);
}

std::size_t FftConvolverGpu::restoring_spectrum_bytes(const PixelGaussian& g, std::size_t width, std::size_t height) {
  return layout_spectrum_bytes(restoring_geometry(g, width, height).layout);
}

std::size_t FftConvolverGpu::restoring_work_bytes(const PixelGaussian& g, std::size_t width, std::size_t height) {
  return layout_work_bytes(restoring_geometry(g, width, height).layout);
}

std::size_t FftConvolverGpu::bytes_needed(std::size_t kw, std::size_t kh, std::size_t cx, std::size_t cy,
                                          std::size_t width, std::size_t height) {
  return 2 * spectrum_bytes(kw, kh, cx, cy, width, height) + work_bytes(kw, kh, cx, cy, width, height);
}

FftConvolverGpu::FftConvolverGpu(FftPlanCache& plans, cudaStream_t stream, std::shared_ptr<const Spectrum> spectrum)
    : stream_(stream), spectrum_(std::move(spectrum)) {
  if (!spectrum_) throw std::invalid_argument("FftConvolverGpu: no spectrum");
  buffer_ = cuda::DeviceBuffer<cufftComplex>(spectrum_->count(), stream_);
  plans_ = plans.get(stream_, layout().pw, layout().ph);
}

FftConvolverGpu::FftConvolverGpu(FftPlanCache& plans, cudaStream_t stream, const float* kernel, std::size_t kw,
                                 std::size_t kh, std::size_t cx, std::size_t cy, std::size_t width, std::size_t height)
    : FftConvolverGpu(plans, stream, kernel_spectrum(plans, stream, stream, kernel, kw, kh, cx, cy, width, height)) {}

void FftConvolverGpu::set_spectrum(std::shared_ptr<const Spectrum> spectrum) {
  if (!spectrum || spectrum->layout().pw != layout().pw || spectrum->layout().ph != layout().ph)
    throw std::invalid_argument("FftConvolverGpu::set_spectrum: a spectrum of another layout");
  spectrum_ = std::move(spectrum);
  joined_ = false;
}

void FftConvolverGpu::convolve(const float* image) {
  if (!joined_) {
    spectrum_->wait_ready(stream_);
    joined_ = true;
  }
  const PaddedLayout& l = layout();
  float* real = reinterpret_cast<float*>(buffer_.data());
  pad_image(stream_, image, l, real);
  check_cufft(cufftExecR2C(plans_->forward, real, buffer_.data()), "cufftExecR2C");
  multiply_spectra(stream_, buffer_.data(), spectrum_->data(), spectrum_->count());
  check_cufft(cufftExecC2R(plans_->inverse, buffer_.data(), real), "cufftExecC2R");
}

void FftConvolverGpu::subtract_from(float* residual, const std::uint8_t* mask, float* masked) {
  subtract_convolved(stream_, reinterpret_cast<const float*>(buffer_.data()), layout(), residual, mask, masked);
}

void FftConvolverGpu::add_to(const float* add, float* out) {
  add_convolved(stream_, reinterpret_cast<const float*>(buffer_.data()), layout(), add, out);
}

void FftConvolverGpu::mask_to(const std::uint8_t* mask, std::size_t border, float* masked) {
  mask_convolved(stream_, reinterpret_cast<const float*>(buffer_.data()), layout(), mask, border, masked);
}

}  // namespace gpuclean::clean::gpu

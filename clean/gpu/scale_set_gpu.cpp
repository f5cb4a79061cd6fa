#include "clean/gpu/scale_set_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/scale_kernels.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/pinned_staging.hpp"

namespace gpuclean::clean::gpu {
namespace {

float float_of_bits(unsigned long long packed) {
  const auto bits = static_cast<std::uint32_t>(packed);
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The window of `image` (device, width x height) within `hw` of (px, py), clipped, to the host.
HostImage download_window(cudaStream_t s, const float* image, std::size_t width, std::size_t height,
                          std::size_t px, std::size_t py, std::size_t hw, std::size_t* x0, std::size_t* y0) {
  *x0 = px - std::min(px, hw);
  *y0 = py - std::min(py, hw);
  const std::size_t x1 = std::min(width, px + hw + 1), y1 = std::min(height, py + hw + 1);
  HostImage w(x1 - *x0, y1 - *y0);
  GPUCLEAN_CUDA_TRY(cudaMemcpy2DAsync(w.pixels.data(), w.width * sizeof(float), image + *y0 * width + *x0,
                                      width * sizeof(float), w.width * sizeof(float), w.height,
                                      cudaMemcpyDeviceToHost, s));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  return w;
}

}  // namespace

ScaleMinorPsfsGpu::ScaleMinorPsfsGpu(GpuResources& resources, const std::vector<CleanScale>& scales,
                                     std::size_t psf_width, std::size_t psf_height)
    : resources_(resources), scales_(scales), conv_(scales.size()) {
  const cudaStream_t s = resources.stream();
  std::size_t side = 1;  // every kernel on the widest one's grid: one FFT layout for all
  for (const CleanScale& sc : scales) side = std::max(side, sc.kernel.width);
  for (std::size_t b = 0; b < scales.size(); ++b) {
    if (scales[b].kernel.size() == 1) continue;
    const HostImage k = embed_centred(scales[b].kernel, side);
    cuda::DeviceBuffer<float> d_kernel(k.size(), s);  // freed in stream order after its transform
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_kernel.data(), k.pixels.data(), k.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, s));
    conv_[b] = std::make_unique<FftConvolverGpu>(resources.plans(), s, d_kernel.data(), k.width, k.height,
                                                 k.width / 2, k.height / 2, psf_width, psf_height);
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));  // the kernel's host copy goes out of scope
  }
  const std::size_t n = psf_width * psf_height;
  once_ = cuda::DeviceBuffer<float>(n, s);
  twice_ = cuda::DeviceBuffer<float>(n, s);
  sidelobe_ = cuda::DeviceBuffer<unsigned long long>(1, s);
}

std::vector<ScaleMinorPsf> ScaleMinorPsfsGpu::compute(const PreparedPsf& psf, const float* d_psf,
                                                      const std::vector<float>& divide_by, float delta_sidelobe) {
  const cudaStream_t s = resources_.stream();
  const HostImage& image = psf.image;
  const std::size_t at = psf.peak_y * image.width + psf.peak_x;
  std::vector<ScaleMinorPsf> out(scales_.size());
  for (std::size_t b = 0; b < scales_.size(); ++b) {
    const CleanScale& sc = scales_[b];
    ScaleMinorPsf& m = out[b];
    unsigned long long packed = 0;
    if (!conv_[b]) {
      m.window = psf_window(image, psf.peak_x, psf.peak_y, sc.patch, 1.0f);
      m.once_peak = 1.0f;
      if (delta_sidelobe >= 0.0f) {
        m.sidelobe = std::min(delta_sidelobe, 1.0f);
        continue;
      }
      GPUCLEAN_CUDA_TRY(cudaMemsetAsync(sidelobe_.data(), 0, sizeof(unsigned long long), s));
      abs_max_outside(s, d_psf, image.width, image.height, psf.peak_x, psf.peak_y, sc.patch, sidelobe_.data());
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&packed, sidelobe_.data(), sizeof packed, cudaMemcpyDeviceToHost, s));
      GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
      m.sidelobe = std::min(float_of_bits(packed), 1.0f);
      continue;
    }
    FftConvolverGpu& conv = *conv_[b];
    conv.convolve(d_psf);
    conv.add_to(nullptr, once_.data());
    conv.convolve(once_.data());
    conv.add_to(nullptr, twice_.data());
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(sidelobe_.data(), 0, sizeof(unsigned long long), s));
    abs_max_outside(s, twice_.data(), image.width, image.height, psf.peak_x, psf.peak_y, sc.patch, sidelobe_.data());
    float peaks[2] = {0.0f, 0.0f};  // once and twice at the PSF's peak
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&packed, sidelobe_.data(), sizeof packed, cudaMemcpyDeviceToHost, s));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&peaks[0], once_.data() + at, sizeof(float), cudaMemcpyDeviceToHost, s));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&peaks[1], twice_.data() + at, sizeof(float), cudaMemcpyDeviceToHost, s));
    std::size_t x0 = 0, y0 = 0;
    HostImage w = download_window(s, twice_.data(), image.width, image.height, psf.peak_x, psf.peak_y, sc.patch, &x0,
                                  &y0);
    m.once_peak = peaks[0];
    const float divisor = divide_by[b] > 0.0f ? divide_by[b] : m.once_peak;
    if (!(divisor > 0.0f)) continue;
    m.sidelobe = std::min(float_of_bits(packed) / std::abs(peaks[1]), 1.0f);
    for (float& v : w.pixels) v /= divisor;
    m.window = PreparedPsf{std::move(w), psf.peak_x - x0, psf.peak_y - y0, 1.0f};
  }
  return out;
}

std::vector<CleanScale> prepare_scales_gpu(GpuResources& resources, const PreparedPsf& psf,
                                           const CleanSettings& settings, double beam_fwhm, std::size_t width,
                                           std::size_t height, float delta_sidelobe) {
  const HostImage& image = psf.image;
  std::vector<CleanScale> scales =
      plan_scales(settings, beam_fwhm, width, height, std::max(image.width, image.height));
  const bool any_kernel = std::any_of(scales.begin(), scales.end(), [](const CleanScale& c) { return c.kernel.size() > 1; });
  std::vector<ScaleMinorPsf> minor;
  if (any_kernel) {
    const cudaStream_t s = resources.stream();
    cuda::DeviceBuffer<float> d_psf(image.size(), s);
    cuda::upload(resources.staging(), s, d_psf.data(), image.pixels.data(), image.size());
    ScaleMinorPsfsGpu psfs(resources, scales, image.width, image.height);
    minor = psfs.compute(psf, d_psf.data(), std::vector<float>(scales.size(), 0.0f), delta_sidelobe);
  } else {
    for (const CleanScale& sc : scales)
      minor.push_back({psf_window(image, psf.peak_x, psf.peak_y, sc.patch, 1.0f), std::min(delta_sidelobe, 1.0f), 1.0f});
  }
  for (std::size_t b = 0; b < scales.size(); ++b) {
    scales[b].psf_peak = minor[b].once_peak;
    scales[b].sidelobe = minor[b].sidelobe;
    scales[b].minor_psf = std::move(minor[b].window);
  }
  drop_uncleanable_scales(scales, settings.multiscale.scales.empty(), std::min(width, height));
  return scales;
}

}  // namespace gpuclean::clean::gpu

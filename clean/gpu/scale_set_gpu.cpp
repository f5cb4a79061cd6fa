#include "clean/gpu/scale_set_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/scale_kernels.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/device_buffer.hpp"
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

std::vector<CleanScale> prepare_scales_gpu(GpuResources& resources, const PreparedPsf& psf,
                                           const CleanSettings& settings, double beam_fwhm, std::size_t width,
                                           std::size_t height, float delta_sidelobe) {
  const HostImage& image = psf.image;
  std::vector<CleanScale> scales =
      plan_scales(settings, beam_fwhm, width, height, std::max(image.width, image.height));
  const cudaStream_t s = resources.stream();
  const bool any_kernel = std::any_of(scales.begin(), scales.end(), [](const CleanScale& c) { return c.kernel.size() > 1; });
  cuda::DeviceBuffer<float> d_psf, once, twice;
  cuda::DeviceBuffer<unsigned long long> d_sidelobe;
  if (any_kernel) {
    d_psf = cuda::DeviceBuffer<float>(image.size(), s);
    once = cuda::DeviceBuffer<float>(image.size(), s);
    twice = cuda::DeviceBuffer<float>(image.size(), s);
    d_sidelobe = cuda::DeviceBuffer<unsigned long long>(1, s);
    cuda::upload(resources.staging(), s, d_psf.data(), image.pixels.data(), image.size());
  }
  std::size_t side = 1;  // every kernel on the widest one's grid: one FFT layout for all
  for (const CleanScale& sc : scales) side = std::max(side, sc.kernel.width);
  for (CleanScale& sc : scales) {
    if (sc.kernel.size() == 1) {
      sc.minor_psf = psf_window(image, psf.peak_x, psf.peak_y, sc.patch, 1.0f);
      sc.sidelobe = std::min(delta_sidelobe, 1.0f);
      continue;
    }
    const HostImage k = embed_centred(sc.kernel, side);
    cuda::DeviceBuffer<float> d_kernel(k.size(), s);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_kernel.data(), k.pixels.data(), k.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, s));
    FftConvolverGpu conv(resources.plans(), s, d_kernel.data(), k.width, k.height, k.width / 2, k.height / 2,
                         image.width, image.height);
    conv.convolve(d_psf.data());
    conv.add_to(nullptr, once.data());
    conv.convolve(once.data());
    conv.add_to(nullptr, twice.data());
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(d_sidelobe.data(), 0, sizeof(unsigned long long), s));
    abs_max_outside(s, twice.data(), image.width, image.height, psf.peak_x, psf.peak_y, sc.patch, d_sidelobe.data());
    unsigned long long packed = 0;
    float peaks[2] = {0.0f, 0.0f};  // once and twice at the PSF's peak
    const std::size_t at = psf.peak_y * image.width + psf.peak_x;
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&packed, d_sidelobe.data(), sizeof packed, cudaMemcpyDeviceToHost, s));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&peaks[0], once.data() + at, sizeof(float), cudaMemcpyDeviceToHost, s));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&peaks[1], twice.data() + at, sizeof(float), cudaMemcpyDeviceToHost, s));
    std::size_t x0 = 0, y0 = 0;
    HostImage w = download_window(s, twice.data(), image.width, image.height, psf.peak_x, psf.peak_y, sc.patch, &x0, &y0);
    sc.psf_peak = peaks[0];
    if (!(sc.psf_peak > 0.0f)) continue;
    sc.sidelobe = std::min(float_of_bits(packed) / std::abs(peaks[1]), 1.0f);
    for (float& v : w.pixels) v /= sc.psf_peak;
    sc.minor_psf = PreparedPsf{std::move(w), psf.peak_x - x0, psf.peak_y - y0, 1.0f};
  }
  drop_uncleanable_scales(scales, settings.multiscale.scales.empty(), std::min(width, height));
  return scales;
}

}  // namespace gpuclean::clean::gpu

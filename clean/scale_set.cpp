#include "clean/scale_set.hpp"

#include <algorithm>
#include <cmath>

#include "clean/beam.hpp"
#include "clean/errors.hpp"
#include "clean/fft_convolver_cpu.hpp"
#include "clean/scale_kernels.hpp"

namespace gpuclean::clean {
namespace {

HostImage convolve(const HostImage& image, const HostImage& kernel, int threads) {
  HostImage out(image.width, image.height);
  FftConvolverCpu conv(kernel, kernel.width / 2, kernel.height / 2, image.width, image.height, threads);
  conv.convolve(image.pixels.data(), out.pixels.data());
  return out;
}

}  // namespace

// The minor cycle reads the PSF within `half_width` of its peak only: the window is clipped to
// the image, so that the minor cycle's bounds checks see the same edges.
PreparedPsf psf_window(const HostImage& image, std::size_t peak_x, std::size_t peak_y, std::size_t half_width,
                       float divide_by) {
  const std::size_t x0 = peak_x - std::min(peak_x, half_width), y0 = peak_y - std::min(peak_y, half_width);
  const std::size_t x1 = std::min(image.width, peak_x + half_width + 1);
  const std::size_t y1 = std::min(image.height, peak_y + half_width + 1);
  PreparedPsf out;
  out.image = HostImage(x1 - x0, y1 - y0);
  for (std::size_t y = y0; y < y1; ++y)
    for (std::size_t x = x0; x < x1; ++x) out.image.at(x - x0, y - y0) = image.at(x, y) / divide_by;
  out.peak_x = peak_x - x0;
  out.peak_y = peak_y - y0;
  return out;
}

double beam_fwhm_pixels(const CleanProblem& problem) {
  if (problem.restoring_beam) return problem.restoring_beam->fwhm_major_pixels();
  return fit_psf_beam(problem.psf).fwhm_major_pixels();
}

double scale_beam_pixels(const CleanSettings& settings, double beam_fwhm) {
  if (!settings.multiscale.enabled) return 0.0;
  return settings.multiscale.beam_pixels > 0.0 ? settings.multiscale.beam_pixels : beam_fwhm;
}

double scale_beam_pixels(const CleanProblem& problem, const CleanSettings& settings) {
  // The beam is fitted only when it is used (the fit reads the whole PSF).
  const bool fitted = settings.multiscale.enabled && !(settings.multiscale.beam_pixels > 0.0);
  return scale_beam_pixels(settings, fitted ? beam_fwhm_pixels(problem) : 0.0);
}

std::vector<ScaleSummary> summarise_scales(const std::vector<CleanScale>& scales,
                                           const std::vector<Component>& components) {
  std::vector<ScaleSummary> out;
  for (const CleanScale& s : scales) out.push_back({s.size, s.bias, 0, 0.0});
  for (const Component& c : components) {
    out[c.scale].components += 1;
    out[c.scale].flux += c.flux;
  }
  return out;
}

float largest_exterior_sidelobe(const PreparedPsf& psf, std::size_t half_width) {
  const auto hw = static_cast<std::ptrdiff_t>(half_width);
  float worst = 0.0f;
  for (std::size_t y = 0; y < psf.image.height; ++y) {
    const auto dy = static_cast<std::ptrdiff_t>(y) - static_cast<std::ptrdiff_t>(psf.peak_y);
    for (std::size_t x = 0; x < psf.image.width; ++x) {
      const auto dx = static_cast<std::ptrdiff_t>(x) - static_cast<std::ptrdiff_t>(psf.peak_x);
      if (std::abs(dx) <= hw && std::abs(dy) <= hw) continue;
      worst = std::max(worst, std::abs(psf.image.at(x, y)));
    }
  }
  return worst;
}

std::size_t patch_within_sidelobe(const std::vector<PreparedPsf>& psfs, std::size_t half_width, float bound) {
  for (const PreparedPsf& p : psfs) {
    // The largest |PSF| at each Chebyshev distance from the peak, then beyond each distance.
    std::vector<float> beyond(std::max(p.image.width, p.image.height) + 1, 0.0f);
    for (std::size_t y = 0; y < p.image.height; ++y)
      for (std::size_t x = 0; x < p.image.width; ++x) {
        const std::size_t d = std::max(x > p.peak_x ? x - p.peak_x : p.peak_x - x,
                                       y > p.peak_y ? y - p.peak_y : p.peak_y - y);
        beyond[d] = std::max(beyond[d], std::abs(p.image.at(x, y)));
      }
    for (std::size_t d = beyond.size() - 1; d-- > 0;) beyond[d] = std::max(beyond[d], beyond[d + 1]);
    while (half_width + 1 < beyond.size() && beyond[half_width + 1] > bound) ++half_width;
  }
  return half_width;
}

std::vector<CleanScale> plan_scales(const CleanSettings& settings, double beam_fwhm, std::size_t width,
                                    std::size_t height, std::size_t psf_side) {
  const MultiscaleSettings& ms = settings.multiscale;
  std::vector<double> sizes = {0.0};
  if (ms.enabled) {
    sizes = ms.scales.empty() ? automatic_scales(beam_fwhm, std::min(width, height), ms.max_scales) : ms.scales;
    std::sort(sizes.begin(), sizes.end());
  }
  std::vector<CleanScale> scales;
  for (double size : sizes) {
    CleanScale s;
    s.size = size;
    s.kernel = scale_kernel(size, ms.shape, std::min(width, height));
    s.bias = scale_bias_factor(size, beam_fwhm, ms.scale_bias, sizes.size());
    // The twice-convolved PSF is wider than the PSF by the kernel's width, less one.
    s.patch = std::min(settings.beam_patch + (s.kernel.width - 1), psf_side);
    s.border = static_cast<std::size_t>(std::ceil(0.5 * size));
    scales.push_back(std::move(s));
  }
  return scales;
}

void drop_uncleanable_scales(std::vector<CleanScale>& scales, bool automatic, std::size_t min_side) {
  const double quarter = 0.25 * static_cast<double>(min_side);
  std::erase_if(scales, [&](const CleanScale& s) {
    return !(s.psf_peak > 0.0f) || (automatic && s.size >= quarter && s.sidelobe > kMaxAutomaticScaleSidelobe);
  });
  if (scales.empty())
    throw InvalidInput("no scale of --multiscale-scales can be cleaned with this PSF: each kernel averages the PSF "
                       "to zero or below at its peak; add scale 0 or smaller scales.");
}

ScaleMinorPsf scale_minor_psf(const PreparedPsf& psf, const CleanScale& s, float divide_by, int threads) {
  ScaleMinorPsf out;
  if (s.kernel.size() == 1) {
    out.window = psf_window(psf.image, psf.peak_x, psf.peak_y, s.patch, 1.0f);
    out.sidelobe = std::min(largest_exterior_sidelobe(psf, s.patch), 1.0f);
    out.once_peak = 1.0f;
    return out;
  }
  const HostImage once = convolve(psf.image, s.kernel, threads);
  out.once_peak = once.at(psf.peak_x, psf.peak_y);
  const float divisor = divide_by > 0.0f ? divide_by : out.once_peak;
  if (!(divisor > 0.0f)) return out;
  PreparedPsf twice{convolve(once, s.kernel, threads), psf.peak_x, psf.peak_y, 1.0f};
  out.sidelobe = std::min(
      largest_exterior_sidelobe(twice, s.patch) / std::abs(twice.image.at(psf.peak_x, psf.peak_y)), 1.0f);
  out.window = psf_window(twice.image, psf.peak_x, psf.peak_y, s.patch, divisor);
  return out;
}

std::vector<CleanScale> prepare_scales(const PreparedPsf& psf, const CleanSettings& settings, double beam_fwhm,
                                       std::size_t width, std::size_t height, int threads) {
  std::vector<CleanScale> scales =
      plan_scales(settings, beam_fwhm, width, height, std::max(psf.image.width, psf.image.height));
  for (CleanScale& s : scales) {
    ScaleMinorPsf m = scale_minor_psf(psf, s, 0.0f, threads);
    s.psf_peak = m.once_peak;
    s.sidelobe = m.sidelobe;
    s.minor_psf = std::move(m.window);
  }
  drop_uncleanable_scales(scales, settings.multiscale.scales.empty(), std::min(width, height));
  return scales;
}

}  // namespace gpuclean::clean

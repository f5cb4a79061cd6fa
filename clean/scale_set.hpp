#pragma once
// The scales one CLEAN run works with, prepared once from the PSF. Clark is the one-scale case
// (a delta function: its minor-cycle PSF is the PSF itself and every factor is 1), so Clark and
// multiscale CLEAN run the same major/minor loop over a list of these (clark_cpu.cpp, and the
// GPU's clark_gpu.cpp).
//
// A scale s with kernel K (unit sum) is cleaned as WSClean does (Offringa & Smirnov 2017):
// its peaks are found on the residual (x) K, its minor cycle subtracts the twice-convolved PSF
// (PSF (x) K (x) K) from those, and a component of value c adds c K to the model, so the major
// cycle subtracts (c K) (x) PSF from the residual. The minor cycle's loop gain is divided by
// the once-convolved PSF's peak, so that the kernel-shaped component removes `gain` of the
// peak of the scale image.

#include <cstddef>
#include <vector>

#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"
#include "clean/host_image.hpp"
#include "clean/psf.hpp"

namespace gpuclean::clean {

struct CleanScale {
  double size = 0.0;        ///< pixels (0: a delta function)
  HostImage kernel;         ///< odd-sized, centred, unit sum
  double bias = 1.0;        ///< the scale-bias factor its peaks are weighed by
  /// (PSF (x) K) at the PSF's peak: a component's value is (gain / psf_peak) x the scale image's
  /// value, i.e. the minor cycle's flux divided by this.
  float psf_peak = 1.0f;
  /// PSF (x) K (x) K / psf_peak, with its peak pixel where the PSF has it: what the minor cycle
  /// subtracts, per unit of minor-cycle flux.
  PreparedPsf minor_psf;
  std::size_t patch = 0;    ///< the minor cycle's beam-patch half-width
  /// The largest |minor_psf| outside the patch over its value at the peak pixel: the minor cycle
  /// stops at this fraction of its start peak (Clark's rule).
  float sidelobe = 0.0f;
  std::size_t border = 0;   ///< no component of this scale within this many pixels of an edge
};

/// The scales of a run with what needs no PSF filled in (size, kernel, bias, patch, border):
/// {delta} without --multiscale, else the listed or automatic scales, smallest first.
/// `psf_side` caps the patches.
std::vector<CleanScale> plan_scales(const CleanSettings& settings, double beam_fwhm, std::size_t width,
                                    std::size_t height, std::size_t psf_side);

/// An automatic scale of a quarter of the image or more (WSClean's rule allows up to half) whose
/// twice-convolved PSF keeps more than this fraction of its peak outside its patch is left out:
/// it is wider than the PSF image represents well, and gpuclean's major cycle subtracts through
/// the PSF image (WSClean's through the visibilities). Kept, the widest automatic scale of a
/// bright 2048^2 MeerKAT field (615 pixels, 15%) soaked up -7 Jy and the run diverged.
inline constexpr float kMaxAutomaticScaleSidelobe = 0.1f;

/// Drops the scales whose kernel averages the PSF to nothing at its peak (psf_peak <= 0: their
/// gain would be unbounded) and, when the scales are automatic, those that
/// kMaxAutomaticScaleSidelobe rules out on an image whose smaller side is `min_side`. Throws
/// InvalidInput when none is left.
void drop_uncleanable_scales(std::vector<CleanScale>& scales, bool automatic, std::size_t min_side);

/// What the minor cycle of scale `s` subtracts for one PSF: the window of PSF (x) K (x) K (the PSF
/// itself for a delta scale) of half-width s.patch divided by `divide_by` (0: by once_peak), its
/// largest |value| outside the patch over its peak (min 1), and (PSF (x) K) at the PSF's peak
/// (1 for a delta scale). A joined run divides every plane's by the integrated PSF's once_peak,
/// as radler gives every channel its integrated PSF's scale gain. The window is empty when the
/// divisor is not positive.
struct ScaleMinorPsf {
  PreparedPsf window;
  float sidelobe = 0.0f;
  float once_peak = 0.0f;
};
ScaleMinorPsf scale_minor_psf(const PreparedPsf& psf, const CleanScale& s, float divide_by, int threads);

/// The scales of a run: {delta} without --multiscale, else the listed or automatic scales,
/// smallest first. `beam_fwhm` is the restoring beam's major FWHM in pixels (automatic scales,
/// bias). The scale convolutions of the PSF use `threads` CPU threads.
std::vector<CleanScale> prepare_scales(const PreparedPsf& psf, const CleanSettings& settings, double beam_fwhm,
                                       std::size_t width, std::size_t height, int threads);

/// The restoring beam's major FWHM in pixels, which sets the automatic scales: the problem's
/// restoring beam when it has one, else the beam fitted to its PSF (WSClean's fit).
double beam_fwhm_pixels(const CleanProblem& problem);

/// The beam that automatic scales and their bias are measured in: --multiscale-beam if given,
/// else beam_fwhm_pixels(); 0 without --multiscale.
double scale_beam_pixels(const CleanProblem& problem, const CleanSettings& settings);

/// The same from a known restoring (or fitted) beam's major FWHM in pixels, for those that plan
/// a run's scales before it has a problem (the GPU memory estimate, gpu_memory.cpp).
double scale_beam_pixels(const CleanSettings& settings, double beam_fwhm);

/// Per scale: its size, bias, and the number and flux of the components made with it.
std::vector<ScaleSummary> summarise_scales(const std::vector<CleanScale>& scales,
                                           const std::vector<Component>& components);

/// The PSF window the minor cycle reads: `image` within `half_width` of (peak_x, peak_y),
/// clipped to the image, divided by `divide_by`.
PreparedPsf psf_window(const HostImage& image, std::size_t peak_x, std::size_t peak_y, std::size_t half_width,
                       float divide_by);

/// The largest |PSF| outside the square of half-width `half_width` around its peak.
float largest_exterior_sidelobe(const PreparedPsf& psf, std::size_t half_width);

/// The smallest half-width, at least `half_width`, outside which no PSF of `psfs` keeps more than
/// `bound` of its peak (largest_exterior_sidelobe ≤ bound for each), in one pass per PSF.
std::size_t patch_within_sidelobe(const std::vector<PreparedPsf>& psfs, std::size_t half_width, float bound);

}  // namespace gpuclean::clean

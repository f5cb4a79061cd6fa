#pragma once
// WSClean's -local-rms: thresholds against a map of the local noise instead of one global
// value, made from the residual at the start and remade whenever the residual's peak has fallen
// to half of what it was at the last map (WSClean remakes it at each of its major iterations,
// which end when the peak has fallen by -mgain, typically 0.8 to 0.9). The map is the root of a Gaussian-weighted mean of the squared residual,
//   rms(p) = sqrt( sum_q w(q - p) r(q)^2 / sum_q w(q - p) [r(q) finite] ),
// over a circular Gaussian window of FWHM = window x the restoring beam's major axis (WSClean's
// radler uses the same circular window), cut at 4 sigma. Unlike radler, the mean is over the
// window's part that holds finite pixels, so the map does not fall towards the edges or NaN
// areas. Peaks are then searched on r(p) x min_rms / rms(p): thresholds (and --auto-threshold's
// sigma, which becomes min_rms) are in the units of the quietest part of the image.
//
// The window is separable, so the map is two 1-D passes with sums in double, added tap by tap
// in the same order on the CPU and the GPU (local_rms_gpu.hpp) without fused multiply-adds: the
// two maps are the same to the bit.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "clean/enum_names.hpp"

#include "clean/host_image.hpp"

namespace gpuclean::clean {

/// kRms: WSClean's map (above). kMad: a robust one, as the global --auto-threshold's noise is:
/// 1.4826 x the median absolute deviation of the finite pixels in boxes of side window x beam on
/// a grid of half that step (at most 64 x 64 samples of each box, on a regular lattice), taken
/// as exact order statistics, and bilinear between the box centres (BANE's and SExtractor's
/// scheme). Sources hardly raise it, where they raise the RMS until they are cleaned.
enum class LocalRmsMethod { kRms, kMad };
inline constexpr std::array<EnumName<LocalRmsMethod>, 2> kLocalRmsMethodNames{
    {{LocalRmsMethod::kRms, "rms"}, {LocalRmsMethod::kMad, "mad"}}};
inline std::string_view to_string(LocalRmsMethod m) { return name_of(kLocalRmsMethodNames, m); }

struct LocalRmsSettings {
  bool enabled = false;
  double window = 25.0;  ///< the window's FWHM in beams (WSClean's default)
  /// The beam `window` counts, in pixels; 0: the restoring beam's major axis. WSClean counts its
  /// -local-rms-window in its theoretical beam (1 / longest baseline), as --multiscale-beam.
  double beam_pixels = 0.0;
  LocalRmsMethod method = LocalRmsMethod::kRms;
  /// kRms: the window wraps around the image's edges and the mean is over all of it (NaN pixels
  /// as 0), as WSClean 3.3 to 3.7 make their map (radler: a circular FFT convolution with the
  /// window cut at the image's size); false: over the window's finite part inside the image (as
  /// WSClean 3.1's map). The hook sets it for the WSClean version it runs in.
  bool periodic = false;
  /// WSClean 3.7's -local-rms-strength s: peaks are weighed by (min_rms / rms)^s (radler's
  /// MakeRmsFactorImage); 1: the map as it is, 0: no weighing.
  double strength = 1.0;
};

/// The window's taps t[j], j = -radius .. radius (t[0] at index radius): exp(-j^2 / (2 sigma^2)).
std::vector<double> local_rms_taps(double fwhm_pixels);

/// The map is remade once the residual's peak is at most this fraction of its value at the last map.
inline constexpr float kLocalRmsRemakeFactor = 0.5f;

/// At least this fraction of the window's weight must fall on finite pixels for a map value;
/// elsewhere the map is 0 (and such pixels are never cleaned).
inline constexpr double kLocalRmsMinCoverage = 0.01;

/// The sum of `taps` (radius `radius`) over j = -reach .. reach: a periodic window's weight along an axis.
double reach_sum(const std::vector<double>& taps, std::ptrdiff_t radius, std::ptrdiff_t reach);

/// The noise map of `image` (NaN pixels count as absent) on the CPU; `periodic`: see LocalRmsSettings.
HostImage local_rms_map(const HostImage& image, const std::vector<double>& taps, int threads, bool periodic = false);

/// How far the window reaches along an axis of `length` pixels: its taps' radius, and with a
/// periodic window at most (length - 1) / 2, so that no pixel is counted twice.
inline std::ptrdiff_t local_rms_reach(std::ptrdiff_t radius, std::ptrdiff_t length, bool periodic) {
  return periodic ? std::min(radius, (length - 1) / 2) : radius;
}

/// kMad's boxes: side `box`, centres cx[i] = min(i x step, width - 1) (and cy likewise), the
/// samples every `stride` pixels from the box's corner.
struct MadGrid {
  std::size_t box = 1, step = 1, stride = 1;
  std::vector<std::uint32_t> cx, cy;
};
MadGrid mad_grid(std::size_t width, std::size_t height, double window_pixels);

/// Boxes with fewer finite samples than this have no value; the map interpolates around them.
inline constexpr std::size_t kMadMinSamples = 16;

/// 1.4826 x MAD of each box (row-major over cy, cx; -1 where a box has too few samples).
std::vector<float> mad_box_sigmas(const HostImage& image, const MadGrid& grid, int threads);
/// The map from the boxes' values: bilinear between centres over the valid ones (0 where none is).
HostImage mad_interpolate(const std::vector<float>& sigmas, const MadGrid& grid, std::size_t width, std::size_t height);

/// The map of `settings.method` for a window of FWHM `window_pixels`.
HostImage local_noise_map(const HostImage& image, const LocalRmsSettings& settings, double window_pixels, int threads);

/// The peak-search weights of a map: min_rms / rms(p), 0 where the map is 0. min_rms is the
/// smallest positive map value (0 when there is none: then every weight is 0).
struct LocalRmsWeights {
  std::vector<float> weights;
  double min_rms = 0.0, max_rms = 0.0;
};
LocalRmsWeights local_rms_weights(const HostImage& map, double strength = 1.0);

/// One weight from a map value, as the CPU and the GPU both compute it: (min_rms / rms)^strength,
/// 0 where the map is 0 (no finite pixels); strength 0 weighs every pixel 1 (radler).
inline float local_rms_weight(float rms, float min_rms, double strength = 1.0) {
  if (strength == 0.0) return 1.0f;
  if (!(rms > 0.0f)) return 0.0f;
  const double ratio = static_cast<double>(min_rms) / static_cast<double>(rms);
  return static_cast<float>(strength == 1.0 ? ratio : std::pow(ratio, strength));
}

/// What a run reports about its map (CleanResult::diagnostics.local_rms).
struct LocalRmsSummary {
  bool used = false;
  double window_beams = 0.0;
  double window_fwhm_pixels = 0.0;
  double min_rms = 0.0, max_rms = 0.0;
  /// --auto-mask: the major cycle from which the map was no longer used (as in WSClean, the
  /// masked phase thresholds against the global noise); 0 when it was used to the end.
  std::size_t dropped_at_cycle = 0;
};

}  // namespace gpuclean::clean

#pragma once
// Multiscale CLEAN's settings, named as WSClean names them (-multiscale, -multiscale-scales,
// -multiscale-shape, -multiscale-scale-bias, -multiscale-gain, -multiscale-max-scales).

#include <cstddef>
#include <string_view>
#include <vector>

#include "clean/enum_names.hpp"

namespace gpuclean::clean {

/// The shape of a scale's kernel. Both are normalised to a unit sum, so a component's flux is
/// its kernel's integral.
enum class ScaleShape {
  /// Cornwell (2008): (1 - (r / scale)^2) under a Hann taper, on a grid of about `scale` pixels.
  kTaperedQuadratic,
  /// A Gaussian of sigma = 3/16 x scale, cut at 12 sigma.
  kGaussian,
};
inline constexpr std::array<EnumName<ScaleShape>, 2> kScaleShapeNames{
    {{ScaleShape::kTaperedQuadratic, "tapered-quadratic"}, {ScaleShape::kGaussian, "gaussian"}}};
inline std::string_view to_string(ScaleShape s) { return name_of(kScaleShapeNames, s); }

struct MultiscaleSettings {
  bool enabled = false;
  /// Scale sizes in pixels (0 = a delta function). Empty: automatic (WSClean's rule: 0, then
  /// twice the restoring beam's FWHM, doubling while below half the image's smaller side).
  std::vector<double> scales;
  ScaleShape shape = ScaleShape::kTaperedQuadratic;
  /// Larger scales' peaks are weighed by bias^-log2(scale / first automatic scale): below 1
  /// favours large scales.
  double scale_bias = 0.6;
  /// A scale's minor cycle stops once its peak fell by this fraction (WSClean's sub-minor gain).
  double gain = 0.2;
  std::size_t max_scales = 0;  ///< most automatic scales (0 = no limit)
  /// The beam, in pixels, that automatic scales and the bias are measured in; 0: the restoring
  /// beam's FWHM. WSClean measures them in its theoretical beam, 1 / the longest baseline, which is
  /// narrower than a weighted PSF's main lobe (the WSClean hook gives it).
  double beam_pixels = 0.0;
};

/// Throws InvalidSettings, with a sentence that says what to change.
void validate(const MultiscaleSettings& settings);

}  // namespace gpuclean::clean

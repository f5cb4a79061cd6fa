#pragma once
// The power beam vp² of a dish model on an image's pixel grid (SIN projection), evaluated at every
// pixel exactly, in double precision (docs/primary-beam.md says how WSClean/EveryBeam differ).

#include <cstddef>
#include <vector>

#include "beam/dish_model.hpp"

namespace gpuclean::beam {

struct RaDec {
  double ra = 0, dec = 0;  ///< rad
};

/// The pixel grid of an image: row-major, row y = 0 first (FITS order), x along RA.
/// Pixel (x, y) has direction cosines l = (W/2 − x) · scale_l, m = (y − H/2) · scale_m relative to
/// `phase_centre` (W/2, H/2 integer divisions: the pixel of CRPIX = W/2 + 1, as gpuclean's and
/// WSClean's headers put it; l grows towards the east, CDELT1 = −scale_l).
struct ImageGrid {
  std::size_t width = 0, height = 0;
  double scale_l = 0, scale_m = 0;  ///< pixel scale (rad), > 0
  RaDec phase_centre;
};

/// Direction cosines of `direction` relative to `centre` (the SIN projection).
void radec_to_lm(RaDec direction, RaDec centre, double& l, double& m);
/// The exact SIN deprojection; l² + m² must be ≤ 1.
RaDec lm_to_radec(double l, double m, RaDec centre);
/// The angle between two directions (rad), accurate at every separation.
double angular_distance(RaDec a, RaDec b);
/// l, m of pixel (x, y) of `grid` (see ImageGrid).
void pixel_lm(const ImageGrid& grid, double x, double y, double& l, double& m);

struct BeamImageOptions {
  /// false: the radius is the exact angle between the pixel's direction and the pointing.
  /// true: EveryBeam's radius (VoltagePattern::Render): the pixel's l, m shifted by the pointing's
  /// offset (l0, m0) from the phase centre, deprojected, projected around the pointing, shifted back
  /// by (l0, m0), and r = sqrt(l² + m²), the sine of the distance when the pointing is the phase
  /// centre.
  bool everybeam_geometry = false;
  /// Worker threads over rows; 0: std::thread::hardware_concurrency(). The result is the same for
  /// any count.
  unsigned threads = 1;
};

/// The angle (rad) of every pixel's direction from `pointing` (W · H values, row-major); NaN where
/// l² + m² > 1 (no direction).
std::vector<double> distance_image(const ImageGrid& grid, RaDec pointing, const BeamImageOptions& options = {});

/// The power beam vp² = model.power(r, frequency) of every pixel (W · H values, row-major), with r
/// as BeamImageOptions says; 0 where l² + m² > 1. 1 at the pointing (EveryBeam's floor included).
std::vector<double> power_beam_image(const DishModel& model, const ImageGrid& grid, RaDec pointing,
                                     double frequency_hz, const BeamImageOptions& options = {});

}  // namespace gpuclean::beam

#pragma once
// The celestial part of a FITS WCS (axes 1 and 2): enough to turn pixels into RA/Dec for SIN and
// TAN projections (Calabretta & Greisen 2002), and to turn a beam between pixels and the sky.

#include <optional>
#include <string>

#include "io/fits_header.hpp"

namespace gpuclean::io {

struct CelestialWcs {
  double crpix[2] = {1.0, 1.0};  ///< 1-based reference pixel, as in the header
  double crval[2] = {0.0, 0.0};  ///< RA, Dec of the reference pixel [deg]
  /// Linear part: intermediate world offset [deg] = m * (pixel - crpix). Row 0 points east
  /// (increasing RA), row 1 north. From CDi_j, or CDELTi with PCi_j.
  double m[2][2] = {{1.0, 0.0}, {0.0, 1.0}};
  std::string projection;  ///< "SIN", "TAN", or what the header says

  /// Parses CTYPE/CRPIX/CRVAL/CDELT/PC/CD. Empty when axes 1-2 are not RA/Dec with a pixel scale.
  static std::optional<CelestialWcs> from_header(const FitsHeader& header);

  /// RA and Dec [deg] of a 0-based pixel position. NaN for projections other than SIN and TAN.
  void pixel_to_world(double x, double y, double* ra_deg, double* dec_deg) const;

  /// Geometric mean pixel size [deg].
  double pixel_scale_deg() const;
};

}  // namespace gpuclean::io

#include "io/wcs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace gpuclean::io {
namespace {
constexpr double kDeg = std::numbers::pi / 180.0;

double get_or(const FitsHeader& h, const std::string& key, double fallback) {
  return h.get_double(key).value_or(fallback);
}
}  // namespace

std::optional<CelestialWcs> CelestialWcs::from_header(const FitsHeader& h) {
  const auto ctype1 = h.get_string("CTYPE1");
  const auto ctype2 = h.get_string("CTYPE2");
  if (!ctype1 || !ctype2 || ctype1->rfind("RA", 0) != 0 || ctype2->rfind("DEC", 0) != 0) {
    return std::nullopt;
  }
  CelestialWcs w;
  w.projection = ctype1->size() >= 8 ? ctype1->substr(5, 3) : "";
  for (int i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i + 1);
    w.crpix[i] = get_or(h, "CRPIX" + n, 1.0);
    w.crval[i] = get_or(h, "CRVAL" + n, 0.0);
  }
  if (h.has("CD1_1") || h.has("CD2_2")) {
    w.m[0][0] = get_or(h, "CD1_1", 0.0);
    w.m[0][1] = get_or(h, "CD1_2", 0.0);
    w.m[1][0] = get_or(h, "CD2_1", 0.0);
    w.m[1][1] = get_or(h, "CD2_2", 0.0);
  } else {
    const auto c1 = h.get_double("CDELT1");
    const auto c2 = h.get_double("CDELT2");
    if (!c1 || !c2) return std::nullopt;
    const double cdelt[2] = {*c1, *c2};
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        const std::string key = "PC" + std::to_string(i + 1) + "_" + std::to_string(j + 1);
        w.m[i][j] = cdelt[i] * get_or(h, key, i == j ? 1.0 : 0.0);
      }
    }
  }
  if (w.pixel_scale_deg() == 0.0) return std::nullopt;
  return w;
}

double CelestialWcs::pixel_scale_deg() const {
  return std::sqrt(std::abs(m[0][0] * m[1][1] - m[0][1] * m[1][0]));
}

void CelestialWcs::pixel_to_world(double x, double y, double* ra_deg, double* dec_deg) const {
  const double dx = x + 1.0 - crpix[0];
  const double dy = y + 1.0 - crpix[1];
  const double xi = (m[0][0] * dx + m[0][1] * dy) * kDeg;
  const double eta = (m[1][0] * dx + m[1][1] * dy) * kDeg;
  const double r = std::hypot(xi, eta);
  double theta;
  if (projection == "SIN") {
    if (r > 1.0) {
      *ra_deg = *dec_deg = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    theta = std::acos(r);
  } else if (projection == "TAN") {
    theta = r == 0.0 ? std::numbers::pi / 2 : std::atan(1.0 / r);
  } else {
    *ra_deg = *dec_deg = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  const double phi = r == 0.0 ? 0.0 : std::atan2(xi, -eta);
  // Zenithal projection: native pole at (alpha0, delta0), LONPOLE = 180 deg.
  const double a0 = crval[0] * kDeg;
  const double d0 = crval[1] * kDeg;
  const double dphi = phi - std::numbers::pi;
  const double sin_dec = std::sin(theta) * std::sin(d0) + std::cos(theta) * std::cos(d0) * std::cos(dphi);
  const double dec = std::asin(std::clamp(sin_dec, -1.0, 1.0));
  const double ra = a0 + std::atan2(-std::cos(theta) * std::sin(dphi),
                                    std::sin(theta) * std::cos(d0) - std::cos(theta) * std::sin(d0) * std::cos(dphi));
  double ra_d = ra / kDeg;
  ra_d = std::fmod(ra_d, 360.0);
  if (ra_d < 0) ra_d += 360.0;
  *ra_deg = ra_d;
  *dec_deg = dec / kDeg;
}

}  // namespace gpuclean::io

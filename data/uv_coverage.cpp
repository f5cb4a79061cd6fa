#include "data/uv_coverage.hpp"

#include <cmath>
#include <numbers>

namespace gpuclean::data {

std::vector<UvSample> uv_tracks(const ArrayLayout& array, const TrackSettings& s) {
  constexpr double kDeg = std::numbers::pi / 180.0;
  constexpr double kC = 299792458.0;
  const double lambda = kC / s.freq_hz;
  const double dec = s.dec_deg * kDeg;
  const double lat = array.latitude_deg * kDeg;
  const std::size_t n_ant = array.x.size();
  std::vector<UvSample> out;
  // Sidereal hours: the hour angle advances 15.041 deg per solar hour.
  const double sidereal = 1.0027379093;
  for (double t = s.ha_start_hours * 3600.0; t <= s.ha_end_hours * 3600.0 + 1e-6; t += s.step_seconds) {
    const double h = t / 3600.0 * sidereal * 15.0 * kDeg;
    const double sin_el = std::sin(lat) * std::sin(dec) + std::cos(lat) * std::cos(dec) * std::cos(h);
    if (sin_el < std::sin(s.min_elevation_deg * kDeg)) continue;
    const double sh = std::sin(h), ch = std::cos(h), sd = std::sin(dec), cd = std::cos(dec);
    for (std::size_t a = 0; a < n_ant; ++a) {
      for (std::size_t b = a + 1; b < n_ant; ++b) {
        const double bx = array.x[b] - array.x[a];
        const double by = array.y[b] - array.y[a];
        const double bz = array.z[b] - array.z[a];
        // Thompson, Moran & Swenson eq. 4.1.
        const double u = (sh * bx + ch * by) / lambda;
        const double v = (-sd * ch * bx + sd * sh * by + cd * bz) / lambda;
        out.push_back({u, v});
      }
    }
  }
  return out;
}

}  // namespace gpuclean::data

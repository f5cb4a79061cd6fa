#pragma once
// Published antenna positions of real interferometers.

#include <string>
#include <string_view>
#include <vector>

namespace gpuclean::data {

/// Antenna positions in the local equatorial frame [m]: X towards the local meridian in the
/// equatorial plane, Y towards east, Z towards the north celestial pole.
struct ArrayLayout {
  std::string name;
  std::string telescope;     ///< TELESCOP keyword
  double latitude_deg = 0;
  double dish_diameter_m = 0;
  std::vector<double> x, y, z;
  double default_dec_deg = 0;  ///< a declination that suits the site
};

/// "meerkat" (64 dishes) or "vla-a" (27 dishes, A configuration). Throws std::invalid_argument
/// listing the known names otherwise.
ArrayLayout array_layout(std::string_view name);
std::vector<std::string> array_names();

}  // namespace gpuclean::data

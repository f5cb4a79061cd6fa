#include "app/wsclean/wsclean_angle.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "clean/errors.hpp"

namespace gpuclean::app {

double parse_wsclean_angle(const std::string& text, const std::string& option, AngleUnit default_unit) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(value))
    throw clean::InvalidSettings(option + " '" + text + "' is not an angle (a number, then deg, amin, asec, mas or rad)");
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(" \t"));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  constexpr double kDeg = M_PI / 180;
  static const std::pair<const char*, double> kUnits[] = {
      {"deg", kDeg},           {"degrees", kDeg},       {"amin", kDeg / 60},         {"arcmin", kDeg / 60},
      {"'", kDeg / 60},        {"asec", kDeg / 3600},   {"arcsec", kDeg / 3600},     {"''", kDeg / 3600},
      {"mas", kDeg / 3.6e6},   {"masec", kDeg / 3.6e6}, {"marcsec", kDeg / 3.6e6},   {"rad", 1.0},
      {"radians", 1.0}};
  if (unit.empty()) return value * (default_unit == AngleUnit::kDegrees ? kDeg : kDeg / 3600);
  for (const auto& [name, factor] : kUnits)
    if (unit == name) return value * factor;
  throw clean::InvalidSettings(option + " '" + text + "': unknown unit '" + unit +
                               "' (deg, amin, asec, mas or rad)");
}

}  // namespace gpuclean::app

#pragma once
// WSClean's angle syntax (W31-ext:aocommon/units/angle.h Angle::Parse): a number, optional blanks,
// then an optional unit; a bare number takes the option's default unit (-scale: degrees,
// -taper-gaussian: arcseconds).
#include <string>

namespace gpuclean::app {

enum class AngleUnit { kDegrees, kArcseconds };

/// The angle in radians. Throws clean::InvalidSettings naming `option` for no number, trailing
/// text that is not a unit (deg, degrees, amin, arcmin, ', asec, arcsec, '', mas, masec, marcsec,
/// rad, radians; any case) or a value that is not finite.
double parse_wsclean_angle(const std::string& text, const std::string& option, AngleUnit default_unit);

}  // namespace gpuclean::app

#pragma once
// -pol's polarizations: WSClean's names, set order and FITS codes. Plain code without casacore
// (the option table of app/ uses it); io/ms/stokes.hpp makes them from an MS's correlations.

#include <string>
#include <vector>

namespace gpuclean::io::ms {

/// One imaged polarization, in WSClean's set order (aocommon::PolarizationEnum: I, Q, U, V, RR,
/// RL, LR, LL, XX, XY, YX, YY). kXYi is the imaginary image WSClean writes beside XY when XY and
/// YX are both imaged (NAME-XYi-*.fits): XY's file holds (XY+YX)/2, XYi's −i(XY−YX)/2; YX has
/// no image of its own.
enum class PolRequest { kI, kQ, kU, kV, kRR, kRL, kLR, kLL, kXX, kXY, kXYi, kYX, kYY };

/// -pol's list as aocommon::Polarization::ParseList reads it (case-insensitive; I, Q, U, V, and
/// pairs XX XY YX YY RR RL LR LL; ',', ' ' or '/' between them; e.g. "iquv", "xx,yy", "QU"), as a
/// set in WSClean's order, XY and YX given as kXY and kXYi. Throws clean::InvalidSettings for
/// anything else (WSClean 3.7 refuses it; 3.1 skipped unknown letters), for XY without YX or YX
/// without XY (WSClean refuses both), and for an empty list.
std::vector<PolRequest> parse_pol_list(const std::string& text);

/// The name WSClean puts in file names: I, Q, U, V, XX, XY, XYi, YY, RR, RL, LR, LL.
std::string pol_name(PolRequest pol);

/// WSClean's CRVAL4 (aocommon FitsWriter): I 1, Q 2, U 3, V 4, RR −1, LL −2, RL −3, LR −4,
/// XX −5, YY −6, XY and XYi −7, YX −8.
double pol_stokes_code(PolRequest pol);

}  // namespace gpuclean::io::ms

#include "io/ms/polarization.hpp"

#include <cctype>
#include <set>

#include "clean/errors.hpp"

namespace gpuclean::io::ms {

std::vector<PolRequest> parse_pol_list(const std::string& text) {
  std::set<PolRequest> set;
  bool xy = false, yx = false;
  const auto refuse = [&](const std::string& why) {
    throw clean::InvalidSettings("-pol " + text + ": " + why +
                                 "; give I, Q, U, V, XX, XY, YX, YY, RR, RL, LR, LL or a list of them (e.g. iquv, xx,yy)");
  };
  std::string t;
  for (char c : text) t += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (c == ',' || c == ' ' || c == '/') {
      if (i == 0 || i + 1 == t.size()) refuse("a separator must stand between two polarizations");
      ++i;
      continue;
    }
    if (c == 'I' || c == 'Q' || c == 'U' || c == 'V') {
      set.insert(c == 'I' ? PolRequest::kI : c == 'Q' ? PolRequest::kQ : c == 'U' ? PolRequest::kU : PolRequest::kV);
      ++i;
      continue;
    }
    if (i + 1 >= t.size()) refuse(std::string("'") + c + "' is not a polarization");
    const std::string two = t.substr(i, 2);
    if (two == "XX") set.insert(PolRequest::kXX);
    else if (two == "YY") set.insert(PolRequest::kYY);
    else if (two == "RR") set.insert(PolRequest::kRR);
    else if (two == "RL") set.insert(PolRequest::kRL);
    else if (two == "LR") set.insert(PolRequest::kLR);
    else if (two == "LL") set.insert(PolRequest::kLL);
    else if (two == "XY") xy = true;
    else if (two == "YX") yx = true;
    else refuse("'" + two + "' is not a polarization");
    i += 2;
  }
  if (xy != yx)
    refuse("XY and YX are imaged together (WSClean writes NAME-XY-* and NAME-XYi-* from both); give both or neither");
  if (xy) set.insert({PolRequest::kXY, PolRequest::kXYi});
  if (set.empty()) refuse("no polarization given");
  return {set.begin(), set.end()};
}

std::string pol_name(PolRequest pol) {
  switch (pol) {
    case PolRequest::kI: return "I";
    case PolRequest::kQ: return "Q";
    case PolRequest::kU: return "U";
    case PolRequest::kV: return "V";
    case PolRequest::kRR: return "RR";
    case PolRequest::kRL: return "RL";
    case PolRequest::kLR: return "LR";
    case PolRequest::kLL: return "LL";
    case PolRequest::kXX: return "XX";
    case PolRequest::kXY: return "XY";
    case PolRequest::kXYi: return "XYi";
    case PolRequest::kYX: return "YX";
    case PolRequest::kYY: return "YY";
  }
  return "?";
}

double pol_stokes_code(PolRequest pol) {
  switch (pol) {
    case PolRequest::kI: return 1;
    case PolRequest::kQ: return 2;
    case PolRequest::kU: return 3;
    case PolRequest::kV: return 4;
    case PolRequest::kRR: return -1;
    case PolRequest::kLL: return -2;
    case PolRequest::kRL: return -3;
    case PolRequest::kLR: return -4;
    case PolRequest::kXX: return -5;
    case PolRequest::kYY: return -6;
    case PolRequest::kXY:
    case PolRequest::kXYi: return -7;
    case PolRequest::kYX: return -8;
  }
  return 1;
}

}  // namespace gpuclean::io::ms

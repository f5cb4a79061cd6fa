#include "io/ms/stokes.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "clean/errors.hpp"
#include "io/ms/ms_metadata.hpp"

namespace gpuclean::io::ms {
namespace {

bool finite(std::complex<float> v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }

bool find(const std::vector<int>& types, int type, std::size_t& index) {
  const auto it = std::find(types.begin(), types.end(), type);
  if (it == types.end()) return false;
  index = static_cast<std::size_t>(it - types.begin());
  return true;
}

int corr_of(PolRequest pol) {
  switch (pol) {
    case PolRequest::kXX: return kCorrXX;
    case PolRequest::kYY: return kCorrYY;
    case PolRequest::kRR: return kCorrRR;
    case PolRequest::kLL: return kCorrLL;
    case PolRequest::kI: break;
  }
  return kCorrI;
}

}  // namespace

PolRequest parse_pol(const std::string& text) {
  std::string t = text;
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "i") return PolRequest::kI;
  if (t == "xx") return PolRequest::kXX;
  if (t == "yy") return PolRequest::kYY;
  if (t == "rr") return PolRequest::kRR;
  if (t == "ll") return PolRequest::kLL;
  throw clean::InvalidSettings("-pol " + text + ": not supported yet (gpuclean image makes i, xx, yy, rr or ll)");
}

std::string pol_name(PolRequest pol) {
  switch (pol) {
    case PolRequest::kI: return "i";
    case PolRequest::kXX: return "xx";
    case PolRequest::kYY: return "yy";
    case PolRequest::kRR: return "rr";
    case PolRequest::kLL: return "ll";
  }
  return "?";
}

bool stokes_rule(const std::vector<int>& types, PolRequest pol, StokesRule& rule, std::string& why) {
  // An I correlation, or the one asked for, is copied as WSClean's TypeToIndex branch does.
  if (find(types, corr_of(pol), rule.a)) {
    rule.kind = StokesRule::Kind::kCopy;
    rule.b = rule.a;
    return true;
  }
  if (pol == PolRequest::kI) {
    rule.kind = StokesRule::Kind::kAverage;
    if (find(types, kCorrXX, rule.a) && find(types, kCorrYY, rule.b)) return true;
    if (find(types, kCorrRR, rule.a) && find(types, kCorrLL, rule.b)) return true;
    why = "Stokes I needs an I correlation, XX and YY, or RR and LL";
    return false;
  }
  why = "it has no " + pol_name(pol) + " correlation";
  return false;
}

void apply_stokes_rule(const StokesRule& rule, std::size_t nchan, std::size_t ncorr,
                       const std::complex<float>* data, const bool* flag, const float* weight,
                       std::complex<float>* value_out, float* weight_out) {
  for (std::size_t c = 0; c < nchan; ++c) {
    const std::size_t ia = c * ncorr + rule.a, ib = c * ncorr + rule.b;
    if (rule.kind == StokesRule::Kind::kCopy) {
      const bool ok = finite(data[ia]);
      value_out[c] = ok ? data[ia] : std::complex<float>(0);
      weight_out[c] = ok && !flag[ia] ? weight[ia] : 0.0f;
    } else {
      const std::complex<float> v = (data[ia] + data[ib]) * 0.5f;
      value_out[c] = finite(v) ? v : std::complex<float>(0);
      const bool ok = !flag[ia] && !flag[ib] && finite(data[ia]) && finite(data[ib]);
      weight_out[c] = ok ? 4.0f * std::min(weight[ia], weight[ib]) : 0.0f;
    }
  }
}

}  // namespace gpuclean::io::ms

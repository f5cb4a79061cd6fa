#include "io/ms/stokes.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

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

/// The correlation of that name (XYi: none of its own).
int corr_of(PolRequest pol) {
  switch (pol) {
    case PolRequest::kI: return kCorrI;
    case PolRequest::kQ: return kCorrQ;
    case PolRequest::kU: return kCorrU;
    case PolRequest::kV: return kCorrV;
    case PolRequest::kRR: return kCorrRR;
    case PolRequest::kRL: return kCorrRL;
    case PolRequest::kLR: return kCorrLR;
    case PolRequest::kLL: return kCorrLL;
    case PolRequest::kXX: return kCorrXX;
    case PolRequest::kXY: return 0;  // XY beside YX: (XY+YX)/2
    case PolRequest::kXYi: return 0;
    case PolRequest::kYX: return kCorrYX;
    case PolRequest::kYY: return kCorrYY;
  }
  return 0;
}

/// The pairs each product can come from, linear feeds first (as CopyData tries them).
struct Pair {
  int a, b;
  StokesRule::Kind kind;
};
std::vector<Pair> pairs_of(PolRequest pol) {
  using K = StokesRule::Kind;
  switch (pol) {
    case PolRequest::kI: return {{kCorrXX, kCorrYY, K::kAverage}, {kCorrRR, kCorrLL, K::kAverage}};
    case PolRequest::kQ: return {{kCorrXX, kCorrYY, K::kDiff}, {kCorrRL, kCorrLR, K::kAverage}};
    case PolRequest::kU: return {{kCorrXY, kCorrYX, K::kAverage}, {kCorrRL, kCorrLR, K::kDiffI}};
    case PolRequest::kV: return {{kCorrXY, kCorrYX, K::kDiffI}, {kCorrRR, kCorrLL, K::kDiff}};
    case PolRequest::kXY: return {{kCorrXY, kCorrYX, K::kAverage}};
    case PolRequest::kXYi: return {{kCorrXY, kCorrYX, K::kDiffI}};
    default: return {};
  }
}

const char* needs(PolRequest pol) {
  switch (pol) {
    case PolRequest::kI: return "Stokes I needs an I correlation, XX and YY, or RR and LL";
    case PolRequest::kQ: return "Stokes Q needs a Q correlation, XX and YY, or RL and LR";
    case PolRequest::kU: return "Stokes U needs a U correlation, XY and YX, or RL and LR";
    case PolRequest::kV: return "Stokes V needs a V correlation, XY and YX, or RR and LL";
    case PolRequest::kXY:
    case PolRequest::kXYi: return "XY and YX need both correlations";
    default: return nullptr;
  }
}

}  // namespace

bool stokes_rule(const std::vector<int>& types, PolRequest pol, StokesRule& rule, std::string& why) {
  // A correlation of that name is copied, as WSClean's TypeToIndex branch does.
  if (const int corr = corr_of(pol); corr != 0 && find(types, corr, rule.a)) {
    rule.kind = StokesRule::Kind::kCopy;
    rule.b = rule.a;
    return true;
  }
  for (const Pair& p : pairs_of(pol)) {
    if (find(types, p.a, rule.a) && find(types, p.b, rule.b)) {
      rule.kind = p.kind;
      return true;
    }
  }
  const char* n = needs(pol);
  why = n ? n : "it has no " + pol_name(pol) + " correlation";
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
      continue;
    }
    std::complex<float> v;
    switch (rule.kind) {
      case StokesRule::Kind::kAverage: v = (data[ia] + data[ib]) * 0.5f; break;
      case StokesRule::Kind::kDiff: v = (data[ia] - data[ib]) * 0.5f; break;
      default: {  // −i(a − b)/2, as WSClean codes it: d = (a − b)/2, v = (d.imag, −d.real)
        const std::complex<float> d = (data[ia] - data[ib]) * 0.5f;
        v = {d.imag(), -d.real()};
      }
    }
    value_out[c] = finite(v) ? v : std::complex<float>(0);
    const bool ok = !flag[ia] && !flag[ib] && finite(data[ia]) && finite(data[ib]);
    weight_out[c] = ok ? 4.0f * std::min(weight[ia], weight[ib]) : 0.0f;
  }
}

void put_stokes_value(const StokesRule& rule, std::complex<float> v, std::complex<float>* row) {
  std::complex<float>& a = row[rule.a];
  std::complex<float>& b = row[rule.b];
  switch (rule.kind) {
    case StokesRule::Kind::kCopy: a = v; return;
    case StokesRule::Kind::kAverage: a = b = v; return;
    case StokesRule::Kind::kDiff: {
      const std::complex<float> m = (a + b) * 0.5f;
      a = m + v, b = m - v;
      return;
    }
    case StokesRule::Kind::kDiffI: {
      const std::complex<float> m = (a + b) * 0.5f, iv(-v.imag(), v.real());
      a = m + iv, b = m - iv;
      return;
    }
  }
}

}  // namespace gpuclean::io::ms

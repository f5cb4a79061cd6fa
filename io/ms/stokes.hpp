#pragma once
// WSClean's rules for one imaged polarization from a row's correlations
// (W31:msproviders/msprovider.cpp, MSProvider::CopyData and CopyWeights). Plain types only, so the
// rules are tested without an MS.

#include <complex>
#include <cstddef>
#include <string>
#include <vector>

namespace gpuclean::io::ms {

/// What -pol asks for: Stokes I, or one correlation as it is.
enum class PolRequest { kI, kXX, kYY, kRR, kLL };

/// -pol's value (i, xx, yy, rr, ll; case-insensitive). Anything else (q, u, v, xy, iquv, lists)
/// throws clean::InvalidSettings: "not supported yet".
PolRequest parse_pol(const std::string& text);
std::string pol_name(PolRequest pol);

/// Which correlations make the imaged value, and how.
struct StokesRule {
  enum class Kind {
    kAverage,  ///< (a + b) / 2, weight 4·min(w_a, w_b); 0 when either is flagged or non-finite
    kCopy,     ///< correlation a as it is, weight w_a; 0 when flagged or non-finite
  };
  Kind kind = Kind::kCopy;
  std::size_t a = 0, b = 0;  ///< correlation indices in the row
};

/// The rule for `pol` over a polarization's CORR_TYPE list: Stokes I from an I correlation if
/// there is one (copied), else from XX and YY, else RR and LL; xx/yy/rr/ll copy that correlation.
/// Returns false (and says why in `why`) when the correlations cannot give it.
bool stokes_rule(const std::vector<int>& corr_types, PolRequest pol, StokesRule& rule, std::string& why);

/// Applies `rule` to one row: data, flag and weight are [channel][correlation] (correlation
/// fastest, as the MS stores them), `nchan` channels of `ncorr` correlations. Writes `nchan`
/// values and weights. A non-finite value becomes 0 (as WSClean); a flagged or non-finite input
/// gives weight 0.
void apply_stokes_rule(const StokesRule& rule, std::size_t nchan, std::size_t ncorr,
                       const std::complex<float>* data, const bool* flag, const float* weight,
                       std::complex<float>* value_out, float* weight_out);

}  // namespace gpuclean::io::ms

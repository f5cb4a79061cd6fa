#pragma once
// WSClean's rules for the imaged polarizations from a row's correlations
// (W31:msproviders/msprovider.cpp, MSProvider::CopyData and CopyWeights; the conventions of
// aocommon's polarization.h, IAU/CASA with X north–south):
//   XX = I + Q, XY = U + iV, YX = U − iV, YY = I − Q;   RR = I + V, RL = Q + iU, LR = Q − iU, LL = I − V
// so I = (XX+YY)/2, Q = (XX−YY)/2, U = (XY+YX)/2, V = −i(XY−YX)/2 and I = (RR+LL)/2,
// Q = (RL+LR)/2, U = −i(RL−LR)/2, V = (RR−LL)/2. A product of two correlations has the weight
// 4·min(w_a, w_b), 0 when either is flagged; a correlation the MS has is copied with its weight.
// Plain types only, so the rules are tested without an MS.

#include <complex>
#include <cstddef>
#include <string>
#include <vector>

#include "io/ms/polarization.hpp"

namespace gpuclean::io::ms {

/// How the imaged value is made from correlations a and b, and (ModelDataWriter) how a model
/// value goes back into them.
struct StokesRule {
  enum class Kind {
    kCopy,     ///< a as it is, weight w_a; back: a = v
    kAverage,  ///< (a + b)/2 (I, U from XY,YX, Q from RL,LR); back: a = b = v
    kDiff,     ///< (a − b)/2 (Q from XX,YY, V from RR,LL); back: a = m + v, b = m − v, m = (a+b)/2
    kDiffI,    ///< −i(a − b)/2 (V from XY,YX, U from RL,LR); back: a = m + iv, b = m − iv
  };
  Kind kind = Kind::kCopy;
  std::size_t a = 0, b = 0;  ///< correlation indices in the row
};

/// The rule for `pol` over a polarization's CORR_TYPE list: a correlation of that name (a
/// Stokes correlation included) is copied; otherwise the pair above, linear feeds first. Returns
/// false (and says why in `why`) when the correlations cannot give it.
bool stokes_rule(const std::vector<int>& corr_types, PolRequest pol, StokesRule& rule, std::string& why);

/// Applies `rule` to one row: data, flag and weight are [channel][correlation] (correlation
/// fastest, as the MS stores them), `nchan` channels of `ncorr` correlations. Writes `nchan`
/// values and weights. A non-finite value becomes 0 (as WSClean); a flagged or non-finite input
/// gives weight 0.
void apply_stokes_rule(const StokesRule& rule, std::size_t nchan, std::size_t ncorr,
                       const std::complex<float>* data, const bool* flag, const float* weight,
                       std::complex<float>* value_out, float* weight_out);

/// Puts the model value `v` into a row's correlations `row` by `rule`'s way back (WSClean's
/// ReverseCopyData): polarizations are written one after another in set order, each keeping
/// what the others put into the pair (Q into XX and YY keeps their I).
void put_stokes_value(const StokesRule& rule, std::complex<float> v, std::complex<float>* row);

}  // namespace gpuclean::io::ms

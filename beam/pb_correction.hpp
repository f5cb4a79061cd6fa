#pragma once
// WSClean's primary-beam correction of a dish's images (the `-pb` images) and the Mueller "beam-k"
// images it writes beside them, for a beam that is a real scalar voltage vp on both feeds: the
// Jones matrix is vp·I₂, so the Mueller matrix is M = conj(A) ⊗ A = vp²·I₄ (docs/primary-beam.md).

#include <cstddef>
#include <span>
#include <vector>

namespace gpuclean::beam {

/// The polarisation sets WSClean corrects (any other set is refused by WSClean before imaging).
enum class PbPolarizations {
  kStokesI,         ///< -pol i
  kSingleCircular,  ///< -pol rr or -pol ll alone: WSClean's "pseudo-Stokes I" correction
  kXXYY,            ///< -pol xx,yy
  kFullStokes,      ///< any set holding I, Q, U and V
};

enum class WscleanVersion { k31, k37 };

/// Whether a pixel of power beam `power_beam` (vp²) is corrected, or becomes NaN in every image of
/// the set. For a dish this is WSClean's test on M = vp²·I₄ (`limit` = -primary-beam-limit):
///   3.7, I / RR / LL: ½(M00 + M33) + Re M30 = vp² > limit   (PrimaryBeamImageSet::ApplyStokesI)
///   3.7, XX,YY:       ‖[[M00, M03], [M30, M33]]‖² = 2 vp⁴ > limit²   (ApplyDiagonal)
///   3.7, IQUV, and 3.1 for every set: ‖M‖² = 4 vp⁴ > limit², i.e. vp² > limit / 2
bool pb_keeps_pixel(double power_beam, PbPolarizations pols, double limit, WscleanVersion version = WscleanVersion::k37);

/// The -pb image of one plane of the set, in place: plane · (1 / vp²) where pb_keeps_pixel, NaN
/// elsewhere. For a dish every plane of the set (I; XX and YY; I, Q, U and V) is corrected alike,
/// so correcting each plane with the same arguments is WSClean's correction of the set (to the
/// rounding of its 2×2 / 4×4 matrix inversion). Sizes must agree (std::invalid_argument).
void correct_plane(std::span<float> plane, std::span<const double> power_beam, PbPolarizations pols,
                   double limit = 0.005, WscleanVersion version = WscleanVersion::k37);

/// The same for a set's planes together: 1 plane for kStokesI and kSingleCircular, 2 (XX, YY) for
/// kXXYY, 4 (I, Q, U, V) for kFullStokes (std::invalid_argument otherwise).
void correct_planes(std::span<const std::span<float>> planes, std::span<const double> power_beam,
                    PbPolarizations pols, double limit = 0.005, WscleanVersion version = WscleanVersion::k37);

/// One Mueller element image WSClean writes as NAME[-tNNNN][-NNNN]-beam-<index>.fits: the
/// 16 reals of the Hermitian 4×4 matrix, its lower triangle ([0] M00, [1]+i[2] M10, [3] M11,
/// [4]+i[5] M20, [6]+i[7] M21, [8] M22, [9]+i[10] M30, [11]+i[12] M31, [13]+i[14] M32, [15] M33).
/// For a dish, elements 0, 3, 8 and 15 are vp² and all others 0.
struct MuellerTerm {
  int index = 0;
  bool is_power_beam = false;  ///< vp² when true, 0 everywhere otherwise
};

/// The elements WSClean writes for a set: 3.1 writes all 16 whatever the set; 3.7 writes
/// {0, 9, 15} for I / RR / LL, {0, 9, 10, 15} for XX,YY and all 16 for IQUV.
std::vector<MuellerTerm> mueller_terms(PbPolarizations pols, WscleanVersion version = WscleanVersion::k31);

/// The pixels of one element image (float, as WSClean writes them).
std::vector<float> mueller_image(const MuellerTerm& term, std::span<const double> power_beam);

}  // namespace gpuclean::beam

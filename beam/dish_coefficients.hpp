#pragma once
// The published coefficients of the dish models (internal to gpuclean_beam; the sources are cited
// in dish_coefficients.cpp and docs/primary-beam.md).

#include <array>
#include <span>

namespace gpuclean::beam::detail {

/// Power pattern P(x) = Σ_j a[j] x^(2j) of one band (a[0] = 1; unused trailing terms 0).
struct PolyBand {
  double frequency_hz = 0;  ///< the band's frequency (interpolation node); 0 for a single set
  std::array<double, 6> a{};
};

struct PolyModel {
  double reference_hz = 1e9;           ///< EveryBeam's ReferenceFrequency()
  double max_radius_arcmin_ghz = 0;    ///< EveryBeam's MaxRadiusInArcMin()
  bool inverted = false;               ///< the coefficients describe 1/P (ATCA)
  std::span<const PolyBand> bands;     ///< ascending frequency
};

const PolyModel& meerkat_model();
const PolyModel& atca_model();
const PolyModel& gmrt_model();

/// The VLA's table: coefficient sets a1…a4 (a0 = 1) keyed by frequency in MHz, ascending.
struct VlaRow {
  int mhz = 0;
  std::array<double, 4> a{};
};
std::span<const VlaRow> vla_table();
inline constexpr double kVlaMaxRadiusArcminGhz = 53.0;
inline constexpr double kVlaReferenceHz = 1e9;

/// ASKAP: Gaussian power beam of FWHM = kAskapFwhmFactor · λ / kAskapDishM.
inline constexpr double kAskapFwhmFactor = 1.09;
inline constexpr double kAskapDishM = 12.0;

}  // namespace gpuclean::beam::detail

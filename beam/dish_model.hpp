#pragma once
// Circularly symmetric primary beams of dish arrays (issue 47, `-apply-primary-beam`): the voltage
// pattern vp(r, ν) of MeerKAT, the VLA, ATCA, GMRT and ASKAP, evaluated as WSClean's EveryBeam
// evaluates its dish models (docs/primary-beam.md). Standard library only: no app/, io/ or
// imaging/ header is included here, and none may be.

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuclean::beam {

enum class DishTelescope { kMeerKAT, kVLA, kATCA, kGMRT, kASKAP };

/// "MeerKAT", "VLA", "ATCA", "GMRT", "ASKAP".
std::string_view telescope_label(DishTelescope telescope);

/// How the polynomial models' argument x follows the distance r from the pointing and the
/// frequency ν, for the models whose EveryBeam reference frequency ν_ref is not 1 GHz (MeerKAT:
/// 1.278 GHz, GMRT: 1.5 GHz; for the VLA and ATCA ν_ref = 1 GHz and both rules agree).
enum class FrequencyScaling {
  /// x = r[arcmin] · ν[GHz] · sqrt(ν_ref / 1 GHz): EveryBeam 0.3–0.5 (what WSClean users get).
  /// MeerKAT's half-power width at 1.284 GHz is then 60.36′.
  kEveryBeam,
  /// x = r[arcmin] · ν[GHz]: no sqrt(ν_ref) factor. MeerKAT's half-power width at 1.284 GHz is
  /// then 68.23′, near the 67.2′ of θ_b = 57.5′ · 1.5 GHz / ν (Mauch et al. 2020 eq. 3, as
  /// data/msim/beam.py quotes it). The radius
  /// where the model stops (see DishModel::max_radius_rad) stays at the same x.
  kPlain,
};

struct DishOptions {
  FrequencyScaling frequency_scaling = FrequencyScaling::kEveryBeam;
  /// ATCA's coefficients describe the inverse of the power beam (CASA's PBMath1DIPoly; EveryBeam's
  /// AreInverted() is true). true: vp = 1/sqrt(P), a beam falling from 1, as CASA and EveryBeam's
  /// point response evaluate it. false: vp = sqrt(P), as EveryBeam's gridded response (the one
  /// WSClean's -apply-primary-beam uses) evaluates it, ignoring the flag: a "beam" that grows
  /// from 1 to 5–8 at the model's edge.
  bool atca_inverted = true;
  /// EveryBeam tabulates each polynomial at 10000 radii over [0, max radius] and looks a radius up
  /// by the sample below it. true: the same lookup (EveryBeam's radial quantisation);
  /// false: the exact polynomial. ASKAP's Gaussian is never tabulated.
  bool everybeam_tabulation = false;
};

/// Which TELESCOPE_NAME (OBSERVATION table, row 0) selects which dish, as EveryBeam's
/// GetTelescopeType reads it (upper-cased): a name starting with "EVLA" → VLA; "ATCA…" → ATCA;
/// "GMRT" → GMRT; "MEERKAT" → MeerKAT. gpuclean's additions: "VLA" and "JVLA" → VLA (EveryBeam
/// does not know them), "ASKAP…" → ASKAP (EveryBeam has no ASKAP model). Anything else is refused:
/// `refusal` holds one line (the aperture arrays LOFAR, AARTFAAC, MWA, OSKAR…, OVRO_LWA/OVRO_MMA
/// need EveryBeam, which Debian does not package; EveryBeam's ALMA and SKA-MID (MID) models are not
/// in gpuclean; any other name is unknown).
struct DishSelection {
  std::optional<DishTelescope> telescope;
  std::string refusal;  ///< empty when `telescope` is set
};
DishSelection select_dish(std::string_view telescope_name);

/// Thrown by DishModel::from_telescope_name with DishSelection::refusal as its message.
class BeamModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The VLA's coefficient set for a frequency (EVLA Memo 195 via CASA's PBMath1DEVLA, as EveryBeam
/// picks it): the band from the frequency, the frequency clamped into that band's tabulated range,
/// then the nearest tabulated frequency (ties to the higher one). No interpolation.
struct VlaCoefficientChoice {
  char band = '?';              ///< P L S C X U K A Q; '?' between bands (no clamping then)
  double clamped_frequency_hz = 0;
  int table_mhz = 0;            ///< the tabulated frequency whose coefficients are used
};
VlaCoefficientChoice vla_coefficient_choice(double frequency_hz);

class DishPattern;

/// One dish model. All angles in radians, frequencies in Hz.
class DishModel {
 public:
  explicit DishModel(DishTelescope telescope, const DishOptions& options = {});
  /// The model select_dish picks; BeamModelError (one line) when it refuses the name.
  static DishModel from_telescope_name(std::string_view telescope_name, const DishOptions& options = {});

  DishTelescope telescope() const { return telescope_; }
  const DishOptions& options() const { return options_; }

  /// The voltage pattern at `radius_rad` from the pointing, before EveryBeam's floor: sqrt(P)
  /// (1/sqrt(P) for inverted ATCA), 0 where P < 0, interpolated linearly in frequency between the
  /// bands of ATCA and GMRT (the end band's pattern outside them). Not cut at the model's edge.
  double raw_voltage(double radius_rad, double frequency_hz) const;
  /// What WSClean's beam images hold as the voltage: (1 − 1e-4) · raw + 1e-4 within
  /// max_radius_rad, 1e-4 beyond it (EveryBeam's VoltagePattern::Render). 1 on axis.
  double voltage(double radius_rad, double frequency_hz) const;
  /// The power beam vp², what -apply-primary-beam divides by.
  double power(double radius_rad, double frequency_hz) const;
  /// The radius beyond which voltage() is 1e-4: the model's maximum radius (arcmin · GHz: MeerKAT
  /// 71, VLA and ATCA 53, GMRT 1.1998662 · 25 / 45 · 43 = 28.66) divided by ν; infinite for ASKAP.
  double max_radius_rad(double frequency_hz) const;
  /// The smallest radius where power() falls to 0.5 (bisection to 1e-12 rad); NaN when it never
  /// does within max_radius_rad (ATCA with atca_inverted = false).
  double half_power_radius_rad(double frequency_hz) const;

 private:
  DishTelescope telescope_;
  DishOptions options_;
};

/// A model at one frequency, for evaluating many radii: what DishModel's functions build per call.
class DishPattern {
 public:
  DishPattern(const DishModel& model, double frequency_hz);
  double raw_voltage(double radius_rad) const;
  double voltage(double radius_rad) const;
  double power(double radius_rad) const {
    const double v = voltage(radius_rad);
    return v * v;
  }
  double max_radius_rad() const { return max_radius_rad_; }

 private:
  double band_voltage(std::size_t band, double x) const;

  bool gaussian_ = false;          // ASKAP
  double gaussian_fwhm_rad_ = 0;
  double arcmin_ghz_per_rad_ = 0;  // ρ = θ · this
  double scale_ = 1;               // x = ρ · scale
  bool tabulate_ = false;
  double inverse_increment_ = 0;   // EveryBeam's samples per unit ρ
  bool inverted_ = false;
  std::array<double, 6> a_[2]{};   // the one or two bands that take part
  std::size_t n_bands_ = 1;
  double weight_ = 0;              // of the second band
  double max_radius_rad_ = 0;
};

}  // namespace gpuclean::beam

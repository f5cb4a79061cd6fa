#include "beam/dish_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>

#include "beam/dish_coefficients.hpp"

namespace gpuclean::beam {

namespace {

constexpr double kFloor = 1e-4;                    // EveryBeam's floor of the voltage pattern
constexpr std::size_t kEveryBeamSamples = 10000;   // EveryBeam's radial samples
constexpr double kSpeedOfLight = 299792458.0;

/// ρ = θ[arcmin] · ν[GHz], EveryBeam's radial unit, as it forms it.
double arcmin_ghz_factor(double frequency_hz) { return (180.0 / std::numbers::pi) * 60.0 * frequency_hz * 1e-9; }

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// Σ_j a_j x^(2j), summed in EveryBeam's order (y *= x² per term).
template <std::size_t N>
double power_polynomial(const std::array<double, N>& a, double x) {
  const double x2 = x * x;
  double y = 1.0, sum = 0.0;
  for (double c : a) {
    sum += y * c;
    y *= x2;
  }
  return sum;
}

/// sqrt(P) (1/sqrt(P) when inverted), 0 where P < 0: EveryBeam's EvaluatePolynomial per sample.
double voltage_from_power(double p, bool inverted) {
  if (p < 0.0) return 0.0;
  if (inverted && p != 0.0) return 1.0 / std::sqrt(p);
  return std::sqrt(p);
}

/// The polynomial description of `telescope` at `frequency_hz` (the VLA's set depends on it).
struct PolyView {
  double reference_hz = 1e9;
  double max_radius = 0;  // arcmin · GHz
  bool inverted = false;
  std::span<const detail::PolyBand> bands;  // empty for the VLA
  detail::PolyBand single{};                // the VLA's chosen set
};

PolyView poly_view(DishTelescope telescope, double frequency_hz, bool atca_inverted) {
  PolyView v;
  switch (telescope) {
    case DishTelescope::kMeerKAT:
    case DishTelescope::kATCA:
    case DishTelescope::kGMRT: {
      const detail::PolyModel& m = telescope == DishTelescope::kMeerKAT ? detail::meerkat_model()
                                   : telescope == DishTelescope::kATCA  ? detail::atca_model()
                                                                        : detail::gmrt_model();
      v.reference_hz = m.reference_hz;
      v.max_radius = m.max_radius_arcmin_ghz;
      v.inverted = m.inverted && (telescope != DishTelescope::kATCA || atca_inverted);
      v.bands = m.bands;
      break;
    }
    case DishTelescope::kVLA: {
      const VlaCoefficientChoice choice = vla_coefficient_choice(frequency_hz);
      for (const detail::VlaRow& row : detail::vla_table()) {
        if (row.mhz == choice.table_mhz) {
          v.single.a = {1.0, row.a[0], row.a[1], row.a[2], row.a[3], 0.0};
          break;
        }
      }
      v.reference_hz = detail::kVlaReferenceHz;
      v.max_radius = detail::kVlaMaxRadiusArcminGhz;
      break;  // `bands` stays empty: the VLA's one set is `single`
    }
    case DishTelescope::kASKAP:
      break;
  }
  return v;
}

}  // namespace

std::string_view telescope_label(DishTelescope telescope) {
  switch (telescope) {
    case DishTelescope::kMeerKAT: return "MeerKAT";
    case DishTelescope::kVLA: return "VLA";
    case DishTelescope::kATCA: return "ATCA";
    case DishTelescope::kGMRT: return "GMRT";
    case DishTelescope::kASKAP: return "ASKAP";
  }
  return "?";
}

DishSelection select_dish(std::string_view telescope_name) {
  const std::string name = upper(telescope_name);
  std::string quoted;
  quoted.reserve(telescope_name.size() + 2);
  quoted.append(1, '\'').append(telescope_name).append(1, '\'');
  DishSelection s;
  if (starts_with(name, "EVLA") || name == "VLA" || name == "JVLA") {
    s.telescope = DishTelescope::kVLA;
  } else if (starts_with(name, "ATCA")) {
    s.telescope = DishTelescope::kATCA;
  } else if (name == "GMRT") {
    s.telescope = DishTelescope::kGMRT;
  } else if (name == "MEERKAT") {
    s.telescope = DishTelescope::kMeerKAT;
  } else if (starts_with(name, "ASKAP")) {
    s.telescope = DishTelescope::kASKAP;
  } else if (name == "LOFAR" || name == "AARTFAAC" || name == "MWA" || starts_with(name, "OSKAR") ||
             name == "OVRO_LWA" || name == "OVRO_MMA" || name == "OVRO-LWA") {
    s.refusal = "the primary beam of telescope " + quoted +
                " (an aperture array) needs EveryBeam, which Debian does not package; gpuclean has no model for it";
  } else if (name == "ALMA" || name == "MID") {
    s.refusal = "gpuclean has no primary-beam model for telescope " + quoted +
                " (EveryBeam has one, but Debian does not package EveryBeam)";
  } else {
    s.refusal = "no primary-beam model for telescope " + quoted +
                " (OBSERVATION TELESCOPE_NAME); gpuclean knows MeerKAT, VLA (EVLA), ATCA, GMRT and ASKAP";
  }
  return s;
}

VlaCoefficientChoice vla_coefficient_choice(double frequency_hz) {
  const double f = frequency_hz;
  // The feed (band) from the frequency, then the frequency clamped into the band's table
  // (CASA PBMath1DEVLA / EveryBeam VLACoefficients: DetermineFeed, LimitFreqForBand).
  // A band holds above < f < below. Within it, f < raise_below becomes raise_to and f ≥ cap becomes
  // cap. (EveryBeam raises P at f ≤ 224 MHz to 232 MHz and L at f ≤ 900 MHz to 1040 MHz, which no
  // frequency inside those bands reaches.)
  struct Band {
    char name;
    double above, below, raise_below, raise_to, cap;
  };
  static constexpr Band kBands[] = {
      {'P', 224e6, 480e6, 224e6, 232e6, 470e6},           {'L', 900e6, 2003e6, 900e6, 1040e6, 2000e6},
      {'S', 1990e6, 4001e6, 2052e6, 2052e6, 3948e6},      {'C', 3990e6, 8001e6, 4052e6, 4052e6, 7948e6},
      {'X', 7990e6, 12001e6, 8052e6, 8052e6, 11948e6},    {'U', 12000e6, 18000e6, 12052e6, 12052e6, 17948e6},
      {'K', 19000e6, 26000e6, 19052e6, 19052e6, 25948e6}, {'A', 28000e6, 38000e6, 28052e6, 28052e6, 38048e6},
      {'Q', 41000e6, 50000e6, 41052e6, 41052e6, 43948e6},
  };
  VlaCoefficientChoice c;
  c.clamped_frequency_hz = f;
  for (const Band& b : kBands) {
    if (f > b.above && f < b.below) {  // the first band that holds f (L before S at 1990–2003 MHz)
      c.band = b.name;
      double g = f < b.raise_below ? b.raise_to : f;
      if (g >= b.cap) g = b.cap;
      c.clamped_frequency_hz = g;
      break;
    }
  }
  // The nearest tabulated frequency in MHz; a tie goes to the higher one.
  const std::span<const detail::VlaRow> table = detail::vla_table();
  const double mhz = c.clamped_frequency_hz * 1e-6;
  auto low = std::lower_bound(table.begin(), table.end(), mhz,
                              [](const detail::VlaRow& row, double value) { return row.mhz < value; });
  if (low == table.end()) {
    c.table_mhz = table.back().mhz;
  } else if (low == table.begin()) {
    c.table_mhz = low->mhz;
  } else {
    const auto prev = low - 1;
    c.table_mhz = std::fabs(mhz - prev->mhz) < std::fabs(low->mhz - mhz) ? prev->mhz : low->mhz;
  }
  return c;
}

DishModel::DishModel(DishTelescope telescope, const DishOptions& options) : telescope_(telescope), options_(options) {}

DishModel DishModel::from_telescope_name(std::string_view telescope_name, const DishOptions& options) {
  const DishSelection s = select_dish(telescope_name);
  if (!s.telescope) throw BeamModelError(s.refusal);
  return DishModel(*s.telescope, options);
}

DishPattern::DishPattern(const DishModel& model, double frequency_hz) {
  const DishTelescope telescope = model.telescope();
  const DishOptions& options = model.options();
  arcmin_ghz_per_rad_ = arcmin_ghz_factor(frequency_hz);
  if (telescope == DishTelescope::kASKAP) {
    gaussian_ = true;
    gaussian_fwhm_rad_ = detail::kAskapFwhmFactor * (kSpeedOfLight / frequency_hz) / detail::kAskapDishM;
    max_radius_rad_ = std::numeric_limits<double>::infinity();
    return;
  }
  const PolyView v = poly_view(telescope, frequency_hz, options.atca_inverted);
  const bool everybeam_scaling = options.frequency_scaling == FrequencyScaling::kEveryBeam;
  scale_ = everybeam_scaling ? std::sqrt(v.reference_hz / 1e9) : 1.0;
  // kPlain keeps the model's edge at the same x: ρ_max · sqrt(ν_ref).
  const double rho_max = everybeam_scaling ? v.max_radius : v.max_radius * std::sqrt(v.reference_hz / 1e9);
  max_radius_rad_ = rho_max / arcmin_ghz_per_rad_;
  tabulate_ = options.everybeam_tabulation;
  inverse_increment_ = double(kEveryBeamSamples - 1) / rho_max;
  inverted_ = v.inverted;
  // The band(s) at this frequency: EveryBeam VoltagePattern::InterpolateValues picks the first band
  // whose frequency is ≥ ν and interpolates linearly from the one before (the end bands outside).
  const std::span<const detail::PolyBand> bands = v.bands.empty() ? std::span(&v.single, 1) : v.bands;
  const std::size_t n = bands.size();
  std::size_t i = 0;
  while (i != n && !(frequency_hz <= bands[i].frequency_hz)) ++i;
  if (n == 1 || i == 0) {
    a_[0] = bands[0].a;
  } else if (i == n) {
    a_[0] = bands[n - 1].a;
  } else {
    a_[0] = bands[i - 1].a;
    a_[1] = bands[i].a;
    n_bands_ = 2;
    weight_ = (frequency_hz - bands[i - 1].frequency_hz) / (bands[i].frequency_hz - bands[i - 1].frequency_hz);
  }
}

double DishPattern::band_voltage(std::size_t band, double x) const {
  return voltage_from_power(power_polynomial(a_[band], x), inverted_);
}

double DishPattern::raw_voltage(double radius_rad) const {
  if (gaussian_) {
    const double q = radius_rad / gaussian_fwhm_rad_;
    return std::exp(-2.0 * std::numbers::ln2 * q * q);  // sqrt of exp(−4 ln2 θ²/FWHM²)
  }
  const double rho = radius_rad * arcmin_ghz_per_rad_;
  double x = rho * scale_;
  if (tabulate_) {
    // EveryBeam: samples i = 0…9999 over ρ ∈ [0, max], x_i = i · sqrt(ν_ref) / inverse_increment;
    // a radius takes the sample int(ρ · inverse_increment) below it.
    x = std::floor(rho * inverse_increment_) * (scale_ / inverse_increment_);
  }
  if (n_bands_ == 1) return band_voltage(0, x);
  // Linear in frequency, in the voltage domain.
  return band_voltage(0, x) * (1.0 - weight_) + band_voltage(1, x) * weight_;
}

double DishPattern::voltage(double radius_rad) const {
  if (radius_rad * radius_rad > max_radius_rad_ * max_radius_rad_) return kFloor;
  return raw_voltage(radius_rad) * (1.0 - kFloor) + kFloor;
}

double DishModel::raw_voltage(double radius_rad, double frequency_hz) const {
  return DishPattern(*this, frequency_hz).raw_voltage(radius_rad);
}
double DishModel::voltage(double radius_rad, double frequency_hz) const {
  return DishPattern(*this, frequency_hz).voltage(radius_rad);
}
double DishModel::power(double radius_rad, double frequency_hz) const {
  return DishPattern(*this, frequency_hz).power(radius_rad);
}
double DishModel::max_radius_rad(double frequency_hz) const { return DishPattern(*this, frequency_hz).max_radius_rad(); }

double DishModel::half_power_radius_rad(double frequency_hz) const {
  const DishPattern pattern(*this, frequency_hz);
  const double c = kSpeedOfLight / frequency_hz;
  const double r_end = telescope_ == DishTelescope::kASKAP ? 4.0 * detail::kAskapFwhmFactor * c / detail::kAskapDishM
                                                           : pattern.max_radius_rad();
  const int steps = 4000;
  const double step = r_end / steps;
  for (int k = 0; k != steps; ++k) {
    double lo = k * step, hi = (k + 1) * step;
    if (pattern.power(hi) > 0.5) continue;
    while (hi - lo > 1e-12) {
      const double mid = 0.5 * (lo + hi);
      (pattern.power(mid) > 0.5 ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace gpuclean::beam

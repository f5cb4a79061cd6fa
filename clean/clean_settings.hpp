#pragma once
// Everything that controls a CLEAN run. Names and meanings follow WSClean where it has them.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "clean/beam.hpp"
#include "clean/enum_names.hpp"
#include "clean/local_rms.hpp"
#include "clean/multiscale_settings.hpp"

namespace gpuclean::clean {

enum class Algorithm { kClark, kHogbom };
enum class Device { kAuto, kGpu, kCpu };

inline constexpr std::array<EnumName<Algorithm>, 2> kAlgorithmNames{{{Algorithm::kClark, "clark"},
                                                                      {Algorithm::kHogbom, "hogbom"}}};
inline constexpr std::array<EnumName<Device>, 3> kDeviceNames{
    {{Device::kAuto, "auto"}, {Device::kGpu, "gpu"}, {Device::kCpu, "cpu"}}};

inline std::string_view to_string(Algorithm a) { return name_of(kAlgorithmNames, a); }
inline std::string_view to_string(Device d) { return name_of(kDeviceNames, d); }

enum class Join { kChannels, kPolarizations };
std::string_view to_string(Join j);

/// A --fit-spectral-pol or --fit-spectral-log-pol fit (clean/spectral_fit.hpp): `terms` = 0 for none.
struct SpectralFitSettings {
  std::size_t terms = 0;
  bool logarithmic = false;
};

/// Restoring beam given by the user: FWHM in arcsec, position angle in degrees (north through east).
struct BeamShape {
  double bmaj_arcsec = 0.0;
  double bmin_arcsec = 0.0;
  double bpa_deg = 0.0;
};

struct CleanSettings {
  Algorithm algorithm = Algorithm::kClark;
  Device device = Device::kAuto;
  std::size_t niter = 100000;     ///< total component limit
  double gain = 0.1;              ///< loop gain of each component
  double mgain = 1.0;             ///< a major cycle stops once the peak fell by this fraction (1 = no limit)
  double threshold = 0.0;         ///< absolute stopping threshold [image units]
  double auto_threshold = 3.0;    ///< stop at this many robust sigma of the residual (0 = off)
  /// WSClean's -auto-mask: clean to this many sigma unmasked, then on inside the mask built from
  /// the components so far (auto_mask.hpp); 0 = off.
  double auto_mask = 0.0;
  /// WSClean 3.7's -abs-auto-mask: the first phase's threshold is at least this [image units]; with
  /// it alone (auto_mask 0) the first phase runs to it. 0 = none.
  double auto_mask_absolute = 0.0;
  bool allow_negative = true;     ///< false: peaks are searched among positive values only
  double clean_border_percent = 0.0;  ///< width of the uncleaned border, per side [% of the size]
  std::size_t select_k = 20050;   ///< Clark: most candidates per major cycle (AIPS MAXPIXEL default)
  std::size_t beam_patch = 50;    ///< Clark: half-width of the beam patch [pixels]
  std::string select_backend = "auto";  ///< GPU: selection backend for active sets and medians
  std::optional<BeamShape> beam_shape;  ///< overrides the fitted restoring beam
  BeamFit beam_fit = BeamFit::kWsclean; ///< how the restoring beam is fitted to the PSF
  int threads = 0;                ///< CPU threads (0 = all cores)
  /// GPU Clark: at every major cycle, also run every exact GPU selection backend on the same
  /// residual and k, check they return the same set, and time them. CLEAN itself is unchanged.
  bool compare_select = false;
  bool compare_select_cpu = false;  ///< ... and the CPU reference too
  MultiscaleSettings multiscale;    ///< --multiscale and its options (Clark only)
  LocalRmsSettings local_rms;       ///< --local-rms, --local-rms-window (Clark only)
  /// A cube's planes cleaned together (WSClean's -join-channels, -join-polarizations); neither:
  /// every plane is its own CLEAN.
  bool join_channels = false, join_polarizations = false;
  /// --join-channels: each component's channel fluxes fitted with a polynomial (or logarithmic
  /// polynomial) of this many terms (WSClean's -fit-spectral-pol, -fit-spectral-log-pol); 0: none.
  std::size_t fit_spectral_pol = 0, fit_spectral_log_pol = 0;

  std::optional<Join> join() const {
    if (join_channels) return Join::kChannels;
    if (join_polarizations) return Join::kPolarizations;
    return std::nullopt;
  }
  SpectralFitSettings spectral_fit() const {
    return fit_spectral_log_pol > 0 ? SpectralFitSettings{fit_spectral_log_pol, true}
                                    : SpectralFitSettings{fit_spectral_pol, false};
  }
};

/// Throws InvalidSettings, with a sentence that says what to change, when a setting is out of range.
void validate(const CleanSettings& settings);

/// WSClean's rule for the two thresholds: an explicit absolute threshold alone rules, and the
/// automatic one (3 sigma by default) is then off; given both, both hold; given neither, the
/// automatic one holds. Front ends call it once they know what the user gave.
void apply_explicit_threshold(CleanSettings& settings, bool threshold_given, bool auto_threshold_given);

/// The stopping rules in force, in one line for the log and the JSON summary, e.g.
/// "--threshold 0.001; auto-threshold off; --niter 100000; divergence".
std::string describe_stopping_rules(const CleanSettings& settings);

}  // namespace gpuclean::clean

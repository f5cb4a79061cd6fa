#include "clean/clean_settings.hpp"

#include <cmath>
#include <cstdio>

#include "clean/errors.hpp"
#include "clean/log_polynomial_fit.hpp"
#include "clean/plane_set.hpp"
#include "select/backend_names.hpp"

namespace gpuclean::clean {

void validate(const CleanSettings& s) {
  auto fail = [](const std::string& m) { throw InvalidSettings(m); };
  if (!(s.gain > 0.0 && s.gain <= 1.0)) fail("--gain must be in (0, 1]; 0.1 is usual.");
  if (!(s.mgain > 0.0 && s.mgain <= 1.0)) fail("--mgain must be in (0, 1]; 0.8 is usual, 1 disables it.");
  if (!(s.threshold >= 0.0) || !std::isfinite(s.threshold)) fail("--threshold must be a finite value >= 0.");
  if (!(s.auto_threshold >= 0.0) || !std::isfinite(s.auto_threshold))
    fail("--auto-threshold must be a finite number of sigma >= 0 (0 turns it off).");
  if (!(s.clean_border_percent >= 0.0 && s.clean_border_percent < 50.0))
    fail("--clean-border must be a percentage in [0, 50).");
  if (s.select_k == 0) fail("--select-k must be at least 1.");
  if (s.beam_patch == 0) fail("--beam-patch must be at least 1 pixel.");
  if (s.threads < 0) fail("--threads must be >= 0 (0 uses every core).");
  // Every build knows every GPU backend's name: a CPU-only build accepts them (the CPU path has
  // no use for them) and refuses a typo, as a GPU build does.
  if (!select::is_clean_backend(s.select_backend))
    fail("--select " + s.select_backend + " is not a selection backend; use one of: " + select::clean_backend_list() +
         " (auto is the default).");
  if (s.beam_shape) {
    const auto& b = *s.beam_shape;
    if (!(b.bmaj_arcsec > 0.0) || !(b.bmin_arcsec > 0.0) || !std::isfinite(b.bmaj_arcsec) ||
        !std::isfinite(b.bmin_arcsec) || !std::isfinite(b.bpa_deg))
      fail("--beam-shape needs BMAJ and BMIN > 0 (arcsec) and a finite BPA (degrees).");
    if (b.bmin_arcsec > b.bmaj_arcsec) fail("--beam-shape: BMIN must not exceed BMAJ.");
  }
  if (!(s.auto_mask >= 0.0) || !std::isfinite(s.auto_mask))
    fail("--auto-mask must be a finite number of sigma >= 0 (0 turns it off).");
  if (s.auto_mask > 0.0 && s.auto_mask <= s.auto_threshold)
    fail("--auto-mask must exceed --auto-threshold: it is where the first phase stops and the mask is made.");
  validate(s.multiscale);
  if (s.multiscale.enabled && s.algorithm != Algorithm::kClark)
    fail("--multiscale runs on Clark's major/minor cycles; drop --algorithm hogbom.");
  if (s.local_rms.enabled && s.algorithm != Algorithm::kClark)
    fail("--local-rms runs on Clark's major/minor cycles (with or without --multiscale); drop --algorithm hogbom.");
  if (!(s.local_rms.window > 0.0) || !std::isfinite(s.local_rms.window))
    fail("--local-rms-window must be a finite number of beams > 0; WSClean's default is 25.");
  if (!(s.local_rms.strength >= 0.0) || !std::isfinite(s.local_rms.strength))
    fail("--local-rms-strength must be a finite number >= 0 (1: the map as it is, 0: no weighing).");
  if (!(s.local_rms.beam_pixels >= 0.0) || !std::isfinite(s.local_rms.beam_pixels))
    fail("--local-rms-beam must be a finite number of pixels >= 0 (0: the restoring beam).");
  if (s.join_channels && s.join_polarizations)
    fail("--join-channels with --join-polarizations is not offered yet; give one of them.");
  if (s.fit_spectral_pol > 0 && s.fit_spectral_log_pol > 0)
    fail("--fit-spectral-pol and --fit-spectral-log-pol are two forms of one fit; give one.");
  if ((s.fit_spectral_pol > 0 || s.fit_spectral_log_pol > 0) && !s.join_channels)
    fail(std::string(s.fit_spectral_pol > 0 ? "--fit-spectral-pol" : "--fit-spectral-log-pol") +
         " fits the channels of a joined component; add --join-channels.");
  if (s.fit_spectral_log_pol > static_cast<std::size_t>(kMaxLogTerms))
    fail("--fit-spectral-log-pol takes at most " + std::to_string(kMaxLogTerms) + " terms; give fewer.");
  if (const auto join = s.join()) check_join_settings(*join, s);
}

void apply_explicit_threshold(CleanSettings& s, bool threshold_given, bool auto_threshold_given) {
  if (threshold_given && !auto_threshold_given) s.auto_threshold = 0.0;
}

std::string describe_stopping_rules(const CleanSettings& s) {
  char text[200];
  std::string threshold = "no absolute threshold";
  if (s.threshold > 0.0) {
    std::snprintf(text, sizeof text, "--threshold %g", s.threshold);
    threshold = text;
  }
  std::string automatic = "auto-threshold off";
  if (s.auto_threshold > 0.0) {
    std::snprintf(text, sizeof text, "--auto-threshold %g (x robust noise)", s.auto_threshold);
    automatic = text;
  }
  std::snprintf(text, sizeof text, "%s; %s; --niter %zu; divergence", threshold.c_str(), automatic.c_str(), s.niter);
  std::string rules = text;
  if (s.auto_mask > 0.0) {
    std::snprintf(text, sizeof text, "; --auto-mask %g (unmasked to %g x robust noise, then inside the mask)",
                  s.auto_mask, s.auto_mask);
    rules += text;
  }
  if (s.local_rms.enabled) {
    std::snprintf(text, sizeof text,
                  "; --local-rms %s (thresholds in units of the lowest local noise, window %g beams%s)",
                  std::string(to_string(s.local_rms.method)).c_str(), s.local_rms.window,
                  s.auto_mask > 0.0 ? ", until the auto-mask is made" : "");
    rules += text;
  }
  return rules;
}

}  // namespace gpuclean::clean

#include "clean/multiscale_settings.hpp"

#include <cmath>

#include "clean/errors.hpp"

namespace gpuclean::clean {

void validate(const MultiscaleSettings& s) {
  auto fail = [](const std::string& m) { throw InvalidSettings(m); };
  for (double scale : s.scales) {
    if (!(scale >= 0.0) || !std::isfinite(scale))
      fail("--multiscale-scales takes sizes in pixels >= 0, separated by commas (e.g. 0,4,8,16,32).");
  }
  for (std::size_t i = 0; i < s.scales.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (s.scales[i] == s.scales[j]) fail("--multiscale-scales lists the same scale twice; give each once.");
    }
  }
  if (!(s.scale_bias > 0.0 && s.scale_bias <= 1.0))
    fail("--multiscale-scale-bias must be in (0, 1]; 0.6 is WSClean's default.");
  if (!(s.beam_pixels >= 0.0) || !std::isfinite(s.beam_pixels))
    fail("--multiscale-beam takes the beam's size in pixels (> 0), or 0 for the restoring beam's FWHM.");
  if (!(s.gain > 0.0 && s.gain <= 1.0)) fail("--multiscale-gain must be in (0, 1]; 0.2 is WSClean's default.");
}

}  // namespace gpuclean::clean

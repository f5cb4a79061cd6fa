#pragma once
// What a run produced, for the JSON summary, the components CSV and the closing summary line.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app/run_options.hpp"
#include "clean/beam.hpp"
#include "clean/deconvolver.hpp"
#include "io/wcs.hpp"

namespace gpuclean::app {

struct StageTimes {
  double read = 0, clean = 0, restore = 0, write = 0, total = 0;
};

struct RunReport {
  std::string dirty, psf, output;
  std::string algorithm, device;
  std::size_t width = 0, height = 0, nan_pixels = 0;
  bool dirty_on_device = false;  ///< the dirty image came as a CUDA array and was not copied to the host
  clean::PixelGaussian beam_pixels;
  std::optional<clean::SkyBeam> beam;  ///< empty when the image has no celestial WCS
  bool beam_fitted = true;
  double rms_residual = 0, model_flux = 0, restored_peak = 0;
  StageTimes seconds;
};

/// The single command's --json summary (docs/summary-json.md): one run of one plane.
nlohmann::json make_summary_json(const RunReport& report, const clean::CleanResult& result, const RunOptions& options);

/// One row per model pixel (components at the same pixel summed), in the order first cleaned:
/// x, y (0-based pixels), RA and Dec [deg], flux [Jy].
/// The component list as CSV, one row per pixel (and scale, with a scale_pixels column when
/// `multiscale`), fluxes summed.
std::string components_csv(const clean::CleanResult& result, const std::optional<io::CelestialWcs>& wcs,
                           bool multiscale);

}  // namespace gpuclean::app

#include "app/multiscale_options.hpp"

#include "app/enum_option.hpp"

namespace gpuclean::app {

void add_multiscale_options(CLI::App& app, clean::MultiscaleSettings& m) {
  const std::string g = "Multiscale (WSClean's -multiscale options)";
  auto* on = app.add_flag("--multiscale", m.enabled,
                          "Multiscale CLEAN: each major cycle cleans the scale whose biased peak is brightest")
                 ->group(g);
  app.add_option("--multiscale-scales", m.scales,
                 "Scale sizes in pixels, e.g. 0,4,8,16,32 (default: 0, then 4, 8, 16, ... x the restoring beam's "
                 "FWHM while below half the image)")
      ->delimiter(',')->needs(on)->group(g);
  add_enum_option(app, "--multiscale-shape", m.shape, clean::kScaleShapeNames,
                  "Scale kernel: tapered-quadratic (Cornwell 2008) or gaussian")
      ->needs(on)->group(g);
  app.add_option("--multiscale-scale-bias", m.scale_bias,
                 "Weigh a scale's peak by BIAS^-log2(scale / (2 x beam FWHM)); lower favours larger scales")
      ->capture_default_str()->needs(on)->group(g);
  app.add_option("--multiscale-gain", m.gain, "A scale's minor cycle ends once its peak fell by this fraction")
      ->capture_default_str()->needs(on)->group(g);
  app.add_option("--multiscale-max-scales", m.max_scales, "Most automatic scales, 0 included (0: no limit)")
      ->capture_default_str()->needs(on)->group(g);
  app.add_option("--multiscale-beam", m.beam_pixels,
                 "Beam size in pixels that the automatic scales and the bias are measured in (default 0: the "
                 "restoring beam's FWHM; WSClean uses its theoretical beam, 1 / longest baseline)")
      ->capture_default_str()->needs(on)->group(g);
}

}  // namespace gpuclean::app

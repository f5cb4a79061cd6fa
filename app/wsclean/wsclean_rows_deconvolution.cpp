// WSClean's DECONVOLUTION OPTIONS (W37:main/commandline.cpp; defaults W31:main/settings.h). They
// fill the clean settings directly, checked here and by clean::validate; the hook's column says
// how each reaches gpuclean inside WSClean.
#include "app/wsclean/wsclean_rows.hpp"

#include "clean/errors.hpp"
#include "clean/log_polynomial_fit.hpp"

namespace gpuclean::app::wsclean_rows {
namespace v = wsclean_value;

namespace {

using clean::InvalidSettings;

clean::CleanSettings& s(ImageOptions& o) { return o.deconvolution.settings; }

ImageApply flag(bool clean::CleanSettings::*member, bool value) {
  return [member, value](ImageOptions& o, const GivenOption&) { s(o).*member = value; };
}

ImageApply local_rms(const std::function<void(ImageOptions&, const GivenOption&)>& then) {
  // WSClean: -local-rms, -local-rms-window and -local-rms-method turn the local RMS on.
  return [then](ImageOptions& o, const GivenOption& g) {
    s(o).local_rms.enabled = true;
    if (then) then(o, g);
  };
}

std::string terms_text(std::size_t max) { return "at most " + std::to_string(max); }

}  // namespace

void deconvolution_rows(std::vector<WscleanOption>& rows) {
  const std::string own_clean = "gpuclean image cleans with Clark (or multiscale) CLEAN";
  const std::string subminor = "a speed switch of WSClean's own minor loops; gpuclean's are its own";
  const std::string polarimetry = "not supported yet: gpuclean image cleans each polarization of -pol on its own "
                                  "(joined polarizations are planned)";
  add(rows, "DECONVOLUTION OPTIONS",
      {
          meta(yes("niter", 1, "<count>", "Most CLEAN components over all major iterations (default 0: imaging only).",
                   [](ImageOptions& o, const GivenOption& g) { o.deconvolution.niter = v::count(g); }),
               "niter"),
          yes("nmiter", 1, "<count>", "Most major iterations (default 20 in WSClean 3.1, 12 in 3.7; 0: no limit).",
              [](ImageOptions& o, const GivenOption& g) { o.deconvolution.nmiter = v::count(g); }, "default 20"),
          meta(yes("gain", 1, "<gain>", "Loop gain of each component (default 0.1).",
                   [](ImageOptions& o, const GivenOption& g) { s(o).gain = v::fraction(g); }),
               "gain"),
          meta(yes("mgain", 1, "<gain>", "A major iteration ends once the peak fell by this fraction (default 1).",
                   [](ImageOptions& o, const GivenOption& g) { o.deconvolution.mgain = v::fraction(g); }),
               "mgain"),
          yes("mgain-boosting", 1, "<boost>",
              "The first major iteration goes 1 - (1 - mgain)^boost deep, the second half as much more (3.7).",
              [](ImageOptions& o, const GivenOption& g) { o.deconvolution.mgain_boosting = v::at_least(g, 0, true); },
              "default 1 (no boost), as WSClean 3.7"),
          yes("major-iteration-mode", 1, "single|dual|full",
              "With auto-masking: continue the iteration that reaches the mask's threshold in the image (3.7).",
              [](ImageOptions& o, const GivenOption& g) {
                const std::string m = v::choice(g, {"single", "dual", "full"});
                o.deconvolution.major_iteration_mode = m == "single" ? MajorIterationMode::kSingle
                                                       : m == "dual" ? MajorIterationMode::kDual
                                                                     : MajorIterationMode::kFull;
              },
              "default single, WSClean 3.1's behaviour (3.7's default is dual)"),
          meta(yes("abs-threshold,threshold", 1, "<flux>",
                   "Stop at this absolute peak (Jy unless a unit is given: 1mJy, 20µJy).",
                   [](ImageOptions& o, const GivenOption& g) {
                     s(o).threshold = v::flux_density(g.values[0], g.option);
                     if (s(o).threshold < 0) throw InvalidSettings(g.option + " " + g.values[0] + " must not be negative");
                     o.deconvolution.threshold_given = true;
                   }),
               "threshold"),
          meta(yes("auto-threshold", 1, "<sigma>", "Stop at this many times the residual's robust noise.",
                   [](ImageOptions& o, const GivenOption& g) {
                     s(o).auto_threshold = v::at_least(g, 0);
                     o.deconvolution.auto_threshold_given = true;
                   }),
               "auto-threshold"),
          carried(yes("auto-mask", 1, "<sigma>",
                      "Clean to this many sigma unmasked, then inside the components' mask down to the thresholds.",
                      [](ImageOptions& o, const GivenOption& g) { s(o).auto_mask = v::at_least(g, 0); }),
                  "auto-mask"),
          yes("abs-auto-mask", 1, "<flux>", "The mask phase's absolute threshold (3.7).",
              [](ImageOptions& o, const GivenOption& g) {
                s(o).auto_mask_absolute = v::flux_density(g.values[0], g.option);
                if (s(o).auto_mask_absolute < 0) throw InvalidSettings(g.option + " " + g.values[0] + " must not be negative");
              }),
          yes("auto-mask-nmiter", 1, "<count>",
              "At most this many major iterations after the auto-mask threshold was reached (3.7; default 2).",
              [](ImageOptions& o, const GivenOption& g) { o.deconvolution.auto_mask_nmiter = v::count(g, 1); },
              "without it no limit, as WSClean 3.1"),
          carried(yes("local-rms,rms-background", 0, "", "Thresholds against a local noise map.", local_rms({})),
                  "local-rms"),
          carried(yes("local-rms-strength", 1, "<strength>",
                      "Weigh peaks by (lowest local RMS / local RMS)^strength (3.7; default 1; 0: no local RMS).",
                      [](ImageOptions& o, const GivenOption& g) { s(o).local_rms.strength = v::at_least(g, 0); }),
                  "local-rms-strength"),
          carried(yes("local-rms-window,rms-background-window", 1, "<beams>",
                      "The local noise window, in beams (default 25).",
                      local_rms([](ImageOptions& o, const GivenOption& g) {
                        s(o).local_rms.window = v::at_least(g, 0, true);
                      })),
                  "local-rms-window", {"local-rms"}),
          refused("local-rms-image,rms-background-image", 1, "<file>", "A local noise map from a FITS file.",
                  "not supported yet: gpuclean makes the map from the residual (-local-rms-window)"),
          carried(yes("local-rms-method,rms-background-method", 1, "rms|rms-with-min",
                      "The local noise map: a sliding-window RMS, or that raised to 0.3 x the window's minimum.",
                      local_rms([](ImageOptions& o, const GivenOption& g) {
                        const std::string m = v::choice(g, {"rms", "rms-with-min", "mad"});
                        if (m == "rms-with-min")
                          throw InvalidSettings(g.option + " rms-with-min is not supported yet: gpuclean has rms "
                                                "(WSClean's default) and its own mad");
                        s(o).local_rms.method = m == "rms" ? clean::LocalRmsMethod::kRms : clean::LocalRmsMethod::kMad;
                      }),
                      "rms, and gpuclean's own mad (a robust map); rms-with-min is not supported yet"),
                  "local-rms-method", {"local-rms"}),
          negating(yes("negative", 0, "", "Allow negative components (the default).", flag(&clean::CleanSettings::allow_negative, true)),
                   "no-negative"),
          carried(yes("no-negative,nonegative", 0, "", "No negative components.",
                      flag(&clean::CleanSettings::allow_negative, false)),
                  "no-negative"),
          hook_refused(refused("stop-negative,stopnegative", 0, "", "Stop at the first negative component.",
                               "not supported yet: -no-negative keeps negative components out"),
                       "gpuclean does not stop on a negative component; -no-negative keeps them out"),
          refused("python-deconvolution", 1, "<script>", "Deconvolve with a Python script.",
                  "gpuclean image deconvolves itself; a Python deconvolver runs inside WSClean (gpuclean's hook is "
                  "one: docs/wsclean.md)"),
          hook_refused(refused("iuwt", 0, "", "Deconvolve with IUWT.", own_clean),
                       "selects WSClean's IUWT algorithm instead of the hook"),
          refused("iuwt-snr-test", 0, "", "IUWT: stop when the SNR falls.", own_clean),
          refused("no-iuwt-snr-test", 0, "", "IUWT: no SNR test (its default).", own_clean),
          hook_refused(refused("moresane-ext", 1, "<location>", "Deconvolve with MoreSane.", own_clean),
                       "selects MoreSane instead of the hook"),
          refused("moresane-arg", 1, "<arguments>", "MoreSane's arguments.", own_clean),
          refused("moresane-sl", 1, "<list>", "MoreSane's sigma levels per major iteration.", own_clean),
          refused("asp", 0, "", "Deconvolve with the adaptive scale pixel algorithm (3.7).", own_clean),
          yes("component-optimization", 1, "clean|gradient-descent|linear-solver",
              "How component fluxes are set after the auto-mask threshold (3.7; default clean).",
              [](ImageOptions&, const GivenOption& g) {
                if (v::choice(g, {"clean", "gradient-descent", "linear-solver"}) != "clean")
                  throw InvalidSettings(g.option + " " + g.values[0] + " is not offered: gpuclean sets fluxes by "
                                        "CLEAN (give clean or leave it out)");
              },
              "clean only"),
          carried(yes("multiscale", 0, "", "Multiscale CLEAN.",
                      [](ImageOptions& o, const GivenOption&) { s(o).multiscale.enabled = true; }),
                  "multiscale"),
          carried(yes("multiscale-gain", 1, "<gain>", "A scale's sub-minor loop ends once its peak fell by this (0.2).",
                      [](ImageOptions& o, const GivenOption& g) { s(o).multiscale.gain = v::fraction(g); }),
                  "multiscale-gain"),
          carried(yes("multiscale-scale-bias", 1, "<bias>", "Bias towards small scales (default 0.6).",
                      [](ImageOptions& o, const GivenOption& g) { s(o).multiscale.scale_bias = v::fraction(g); }),
                  "multiscale-scale-bias"),
          carried(yes("multiscale-max-scales", 1, "<count>", "Most automatic scales (default 0: no limit).",
                      [](ImageOptions& o, const GivenOption& g) { s(o).multiscale.max_scales = v::count(g); }),
                  "multiscale-max-scales"),
          carried(yes("multiscale-scales", 1, "<list>", "The scales in pixels (default: from the theoretical beam).",
                      [](ImageOptions& o, const GivenOption& g) {
                        s(o).multiscale.scales = v::numbers(g);
                        for (double sc : s(o).multiscale.scales)
                          if (sc < 0) throw InvalidSettings(g.option + " " + g.values[0] + ": scales must be >= 0");
                      }),
                  "multiscale-scales"),
          carried(yes("multiscale-shape", 1, "tapered-quadratic|gaussian", "The scales' shape.",
                      [](ImageOptions& o, const GivenOption& g) {
                        s(o).multiscale.shape = v::choice(g, {"tapered-quadratic", "gaussian"}) == "gaussian"
                                                    ? clean::ScaleShape::kGaussian
                                                    : clean::ScaleShape::kTaperedQuadratic;
                      }),
                  "multiscale-shape"),
          no_meaning(mapped("multiscale-convolution-padding", 1, "<factor>",
                            "Zero padding of multiscale's convolutions (default 1.1).",
                            "gpuclean's multiscale convolves its scales without padding")),
          no_meaning(mapped("no-multiscale-fast-subminor", 0, "", "Search the whole image in multiscale's sub-minor loop.",
                            subminor)),
          no_meaning(mapped("no-fast-subminor", 0, "", "No sub-minor loop optimisation.", subminor)),
          hook_refused(yes("save-source-list", 0, "", "Write the components as NAME-sources.txt.",
                           [](ImageOptions& o, const GivenOption&) {
                             // WSClean: the list makes multiscale's shape Gaussian (a later -multiscale-shape wins).
                             o.deconvolution.save_source_list = true;
                             s(o).multiscale.shape = clean::ScaleShape::kGaussian;
                           },
                           "with -multiscale the scales become Gaussians, as WSClean"),
                       "WSClean writes no source list for a Python deconvolver"),
          carried(yes("clean-border,cleanborder", 1, "<percent>", "Leave this percentage of each side uncleaned.",
                      [](ImageOptions& o, const GivenOption& g) {
                        s(o).clean_border_percent = v::at_least(g, 0);
                        if (s(o).clean_border_percent >= 50)
                          throw InvalidSettings(g.option + " " + g.values[0] + " must be below 50");
                      }),
                  "clean-border"),
          carried(yes("fits-mask,fitsmask", 1, "<file>", "Clean only where this FITS image is non-zero.",
                      [](ImageOptions& o, const GivenOption& g) { o.deconvolution.fits_mask = g.values[0]; }),
                  "fits-mask"),
          hook_refused(refused("casa-mask,casamask", 1, "<mask>", "Clean only inside a CASA mask.",
                               "gpuclean reads FITS masks; convert it (e.g. CASA's exportfits) and give -fits-mask"),
                       "gpuclean reads FITS masks only; convert it and give -fits-mask"),
          hook_refused(refused("horizon-mask", 1, "<angle>", "Clean only above the horizon.",
                               "not supported yet: give the mask with -fits-mask"),
                       "gpuclean has no horizon mask; give the mask with -fits-mask"),
          carried(yes("fit-spectral-pol", 1, "<terms>", "Fit joined components' spectra with a polynomial.",
                      [](ImageOptions& o, const GivenOption& g) { s(o).fit_spectral_pol = v::count(g, 1); }),
                  "fit-spectral-pol"),
          carried(yes("fit-spectral-log-pol", 1, "<terms>", "The same with a logarithmic polynomial.",
                      [](ImageOptions& o, const GivenOption& g) { s(o).fit_spectral_log_pol = v::count(g, 1); },
                      terms_text(static_cast<std::size_t>(clean::kMaxLogTerms)) + " terms"),
                  "fit-spectral-log-pol"),
          not_yet("fit-rm", 0, "", "Fit rotation measures while cleaning Q and U (3.7).", polarimetry),
          hook_refused(refused("force-spectrum", 1, "<file>", "Force the components' spectral terms from FITS images.",
                               "gpuclean fits each component's spectrum itself"),
                       "gpuclean fits each component's spectrum itself"),
          yes("deconvolution-channels", 1, "<count>", "Deconvolve this many channels averaged from -channels-out.",
              [](ImageOptions& o, const GivenOption& g) { o.deconvolution.deconvolution_channels = v::count(g, 1); }),
          hook_refused(not_yet("squared-channel-joining", 0, "",
                               "Find joined peaks on the sum of squares over channels (for Q and U).", polarimetry),
                       "gpuclean joins channels by their weighted sum only"),
          yes("parallel-deconvolution", 1, "<pixels>",
              "Deconvolve sub-images of at most this size, each on its own, within each major iteration.",
              [](ImageOptions& o, const GivenOption& g) { o.deconvolution.parallel_deconvolution = v::count(g); }),
          no_meaning(yes("deconvolution-threads", 1, "<count>", "Threads of the deconvolution (default: -j).",
                         [](ImageOptions& o, const GivenOption& g) { o.resources.deconvolution_threads = v::count(g); },
                         "the CPU deconvolution's threads; the GPU's work is the GPU's")),
          layout(yes("join-channels,joinchannels", 0, "", "Find peaks on the output channels' weighted mean.",
                     [](ImageOptions& o, const GivenOption&) { s(o).join_channels = true; }),
                 "join-channels"),
          layout(not_yet("join-polarizations,joinpolarizations", 0, "",
                         "Find peaks on the polarizations' sum of squares.", polarimetry),
                 "join-polarizations"),
          hook_refused(not_yet("link-polarizations", 1, "<list>",
                               "Find peaks in these polarizations, clean all of them.", polarimetry),
                       "gpuclean links no polarizations; use -join-polarizations"),
          hook_refused(refused("spectral-correction", 2, "<frequency> <terms>",
                               "Correct a spectral function inside the deconvolution.",
                               "not supported yet: gpuclean's joined channels are weighed by their imaging weights"),
                       "gpuclean applies no spectral correction while cleaning"),
      });
}

}  // namespace gpuclean::app::wsclean_rows

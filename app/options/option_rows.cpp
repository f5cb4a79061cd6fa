// The single command's options, one row each (app/options/option_row.hpp). Within a group the
// rows keep --help's order; a new option is one row here.

#include <cmath>
#include <sstream>

#include "app/options/option_row.hpp"
#include "clean/log_polynomial_fit.hpp"
#include "select/backend_names.hpp"

namespace gpuclean::app {
namespace {

using R = RunOptions;

Range at_least(double low) { return {low, std::nullopt, false, false}; }
Range above(double low) { return {low, std::nullopt, true, false}; }
Range fraction() { return {0.0, 1.0, true, false}; }  // (0, 1]: a gain

std::vector<OptionRow> make_rows() {
  using S = OptionSection;
  const std::string loop = "Loop control", algo = "Algorithm", masks = "Masks and signs", outs = "Outputs",
                    compare = "Selection backends", beam = "Beam", ms = "Multiscale (WSClean's -multiscale options)",
                    cube = "Cubes and channels";
  std::vector<OptionRow> rows = {
      {"-o,--output", S::kOutput, "", "Restored image to write (FITS)", "", {},
       bind::value([](R& r) -> auto& { return r.output; })},

      {"--niter", S::kObservation, loop, "Maximum number of components", "100000", at_least(0),
       bind::value([](R& r) -> auto& { return r.settings.niter; })},
      {"--gain", S::kObservation, loop, "Loop gain of each component", "0.1", fraction(),
       bind::value([](R& r) -> auto& { return r.settings.gain; })},
      {"--mgain", S::kObservation, loop, "End a major cycle once the peak fell by this fraction (1: no limit)", "1",
       fraction(), bind::value([](R& r) -> auto& { return r.settings.mgain; })},
      {"--threshold", S::kObservation, loop,
       "Stop at this absolute peak residual [image units]; given alone, it turns the auto-threshold off", "0",
       at_least(0), bind::value([](R& r) -> auto& { return r.settings.threshold; })},
      {"--auto-threshold", S::kObservation, loop,
       "Stop at SIGMA x robust noise (1.4826 x MAD of the residual); 0 turns it off; off when --threshold is given "
       "without it",
       "3", at_least(0), bind::value([](R& r) -> auto& { return r.settings.auto_threshold; })},
      {"--auto-mask", S::kObservation, loop,
       "Clean unmasked to SIGMA x robust noise, then on only where components went (per scale, their footprints) "
       "down to the final threshold; 0 turns it off (WSClean's -auto-mask)",
       "0", at_least(0), bind::value([](R& r) -> auto& { return r.settings.auto_mask; })},
      {"--local-rms", S::kObservation, loop,
       "Clark: search peaks on residual x lowest local noise / local noise, so thresholds hold against the local "
       "noise map (WSClean's -local-rms)",
       "", {}, bind::flag([](R& r) -> auto& { return r.settings.local_rms.enabled; })},
      {"--local-rms-window", S::kObservation, loop,
       "--local-rms: the noise window's FWHM in beams (WSClean's -local-rms-window)", "25", above(0), bind::value([](R& r) -> auto& { return r.settings.local_rms.window; })},
      {"--local-rms-beam", S::kObservation, loop,
       "--local-rms: the beam in pixels that --local-rms-window counts (default 0: the restoring beam's FWHM; "
       "WSClean uses its theoretical beam, 1 / longest baseline)",
       "0", at_least(0),
       bind::value([](R& r) -> auto& { return r.settings.local_rms.beam_pixels; })},
      {"--local-rms-periodic", S::kObservation, loop,
       "--local-rms (rms): the window wraps around the image's edges and averages over all of it, as WSClean "
       "3.3-3.7 make their map (default: its part inside the image, as WSClean 3.1)",
       "", {}, bind::flag([](R& r) -> auto& { return r.settings.local_rms.periodic; })},
      {"--local-rms-method", S::kObservation, loop,
       "--local-rms: rms (WSClean's: Gaussian-window RMS) or mad (1.4826 x median absolute deviation in boxes, "
       "interpolated: hardly raised by sources)",
       "rms", {},
       bind::choice([](R& r) -> auto& { return r.settings.local_rms.method; }, clean::kLocalRmsMethodNames)},
      {"--local-rms-strength", S::kObservation, loop,
       "--local-rms: peaks are weighed by (lowest local noise / local noise)^STRENGTH (WSClean 3.7's "
       "-local-rms-strength; 0: no local weighing)",
       "1", at_least(0), bind::value([](R& r) -> auto& { return r.settings.local_rms.strength; })},

      {"--algorithm", S::kObservation, algo, "clark or hogbom", "clark", {},
       bind::choice([](R& r) -> auto& { return r.settings.algorithm; }, clean::kAlgorithmNames)},
      {"--device", S::kObservation, algo, "auto (a GPU when usable), gpu or cpu", "auto", {},
       bind::choice([](R& r) -> auto& { return r.settings.device; }, clean::kDeviceNames)},
      {"--select-k", S::kObservation, algo,
       "Clark: most pixels in a major cycle's active set (AIPS's MAXPIXEL default; 25000-30000 suit large images)",
       "20050", at_least(1), bind::value([](R& r) -> auto& { return r.settings.select_k; })},
      {"--select", S::kObservation, algo,
       "GPU: selection backend for active sets and noise medians: " + select::clean_backend_list() +
           " (auto: the fastest for each call by a measured rule)",
       "auto", {}, bind::value([](R& r) -> auto& { return r.settings.select_backend; })},
      {"--beam-patch", S::kObservation, algo, "Clark: half-width of the beam patch [pixels]", "50", at_least(1), bind::value([](R& r) -> auto& { return r.settings.beam_patch; })},
      {"--threads", S::kObservation, algo, "CPU threads (0: every core)", "0", at_least(0),
       bind::value([](R& r) -> auto& { return r.settings.threads; })},

      {"--fits-mask", S::kObservation, masks, "FITS mask on the image grid: non-zero pixels may be cleaned", "", {}, bind::value([](R& r) -> auto& { return r.fits_mask; })},
      {"--no-negative", S::kObservation, masks, "Search peaks among positive values only: no negative components", "",
       {}, bind::flag_call([](R& r) { r.settings.allow_negative = false; })},
      {"--psf-unchecked", S::kObservation, masks,
       "Use the PSF even when its largest value is not its largest magnitude (negated?) or lies far from its centre "
       "and its header's CRPIX (shifted?); normally such a PSF is refused",
       "", {}, bind::flag([](R& r) -> auto& { return r.psf_unchecked; })},
      {"--clean-border", S::kObservation, masks, "Leave this percentage of the size uncleaned on each side", "0",
       Range{0.0, 50.0, false, true},
       bind::value([](R& r) -> auto& { return r.settings.clean_border_percent; })},

      {"--overwrite", S::kObservation, outs, "Replace existing outputs (never an input)", "", {}, bind::flag([](R& r) -> auto& { return r.overwrite; })},
      {"--quicklook-range", S::kObservation, outs,
       "Percentiles of the restored image shown black and white in the quick-look PNG (default 0.5 99.5)", "", {},
       bind::numbers(2, [](R& r, const std::vector<double>& v) { r.quicklook_low = v[0], r.quicklook_high = v[1]; }),
       "", '\0', "LOW HIGH"},

      {"--compare-select", S::kObservation, compare,
       "GPU Clark: at every major cycle also run every GPU selection backend on the same residual and k, check they "
       "select the same pixels, and time them (table, CSV, JSON, PNG chart); CLEAN itself is unchanged",
       "", {}, bind::flag([](R& r) -> auto& { return r.settings.compare_select; })},
      {"--compare-select-cpu", S::kObservation, compare, "With --compare-select: the CPU reference too", "", {}, bind::flag([](R& r) -> auto& { return r.settings.compare_select_cpu; })},

      {"--beam-shape", S::kObservation, beam,
       "Restoring beam BMAJ BMIN BPA (arcsec, arcsec, degrees) instead of the fitted one", "", {},
       bind::numbers(3, [](R& r, const std::vector<double>& v) { r.settings.beam_shape = clean::BeamShape{v[0], v[1], v[2]}; }),
       "", '\0', "BMAJ BMIN BPA"},
      {"--beam-fit", S::kObservation, beam,
       "Beam fit: wsclean (every pixel in a box 10 x the FWHM) or casa (main-lobe pixels above 0.35)", "wsclean", {},
       bind::text_choice(
           {"casa", "wsclean"},
           [](R& r, const std::string& v) { r.settings.beam_fit = v == "wsclean" ? clean::BeamFit::kWsclean : clean::BeamFit::kCasa; },
           [](const R& r) { return r.settings.beam_fit == clean::BeamFit::kWsclean ? "wsclean" : "casa"; })},

      {"--multiscale", S::kObservation, ms,
       "Multiscale CLEAN: each major cycle cleans the scale whose biased peak is brightest", "", {},
       bind::flag([](R& r) -> auto& { return r.settings.multiscale.enabled; })},
      {"--multiscale-scales", S::kObservation, ms,
       "Scale sizes in pixels, e.g. 0,4,8,16,32 (default: 0, then 4, 8, 16, ... x the restoring beam's FWHM while "
       "below half the image)",
       "", at_least(0), bind::value([](R& r) -> auto& { return r.settings.multiscale.scales; }),
       "--multiscale", ','},
      {"--multiscale-shape", S::kObservation, ms, "Scale kernel: tapered-quadratic (Cornwell 2008) or gaussian",
       "tapered-quadratic", {},
       bind::choice([](R& r) -> auto& { return r.settings.multiscale.shape; }, clean::kScaleShapeNames), "--multiscale"},
      {"--multiscale-scale-bias", S::kObservation, ms,
       "Weigh a scale's peak by BIAS^-log2(scale / (2 x beam FWHM)); lower favours larger scales", "0.6", fraction(), bind::value([](R& r) -> auto& { return r.settings.multiscale.scale_bias; }),
       "--multiscale"},
      {"--multiscale-gain", S::kObservation, ms, "A scale's minor cycle ends once its peak fell by this fraction", "0.2",
       fraction(), bind::value([](R& r) -> auto& { return r.settings.multiscale.gain; }),
       "--multiscale"},
      {"--multiscale-max-scales", S::kObservation, ms, "Most automatic scales, 0 included (0: no limit)", "0",
       at_least(0),
       bind::value([](R& r) -> auto& { return r.settings.multiscale.max_scales; }), "--multiscale"},
      {"--multiscale-beam", S::kObservation, ms,
       "Beam size in pixels that the automatic scales and the bias are measured in (default 0: the restoring beam's "
       "FWHM; WSClean uses its theoretical beam, 1 / longest baseline)",
       "0", at_least(0),
       bind::value([](R& r) -> auto& { return r.settings.multiscale.beam_pixels; }), "--multiscale"},

      {"-q,--quiet", S::kObservation, "", "Print errors only", "", {},
       bind::flag_call([](R& r) { r.verbosity = Verbosity::kQuiet; })},
      {"-v,--verbose", S::kObservation, "", "Print more detail", "", {},
       bind::flag_call([](R& r) { r.verbosity = Verbosity::kVerbose; })},

      {"--model", S::kOutputFile, outs, "Model image to write (Jy/pixel)", "", {},
       bind::value([](R& r) -> auto& { return r.model; })},
      {"--residual", S::kOutputFile, outs, "Residual image to write (Jy/beam)", "", {},
       bind::value([](R& r) -> auto& { return r.residual; })},
      {"--components", S::kOutputFile, outs, "Component list to write (CSV: x, y, RA, Dec, flux)", "", {}, bind::value([](R& r) -> auto& { return r.components; })},
      {"--json", S::kOutputFile, outs, "Machine-readable summary: a file, or - for stdout", "", {}, bind::value([](R& r) -> auto& { return r.json; })},
      {"--quicklook", S::kOutputFile, outs, "PNG preview of the restored image (see --quicklook-range)", "", {}, bind::value([](R& r) -> auto& { return r.quicklook; })},
      {"--noise-map", S::kOutputFile, outs, "--local-rms: write its last local noise map (Jy/beam) here", "", {}, bind::value([](R& r) -> auto& { return r.noise_map; })},
      {"--compare-prefix", S::kOutputFile, compare,
       "--compare-select writes PREFIX.csv, .json and .png (default: the restored image's name + -select)", "", {}, bind::value([](R& r) -> auto& { return r.compare_prefix; })},

      {"--wsclean-channels", S::kCubeInput, cube,
       "DIRTY is WSClean's NAME: clean NAME-0000-dirty.fits ... (and NAME-0000-I-dirty.fits ... with polarisations) "
       "with their NAME-0000-psf.fits twins as one observation; -o OUT writes OUT-0000-image.fits ... and "
       "OUT-MFS-image.fits (no PSF argument)",
       "", {}, bind::flag([](R& r) -> auto& { return r.cube.wsclean_channels; })},
      {"--save-source-list", S::kCubeInput, cube,
       "--join-channels: write the components as a WSClean source list (text; one source per pixel and scale with its "
       "spectrum fitted, or a flat spectrum without a fit)",
       "", {}, bind::value([](R& r) -> auto& { return r.cube.source_list; })},
      {"--max-gpus", S::kCubeInput, cube,
       "Cubes: spread the plane groups over at most this many of the visible GPUs (0: all)", "0", at_least(0), bind::value([](R& r) -> auto& { return r.cube.max_gpus; })},

      {"--join-channels", S::kCube, cube,
       "Cubes: find peaks on the channels' weighted mean and place each component in every channel with that "
       "channel's value (WSClean's -join-channels); without it every plane is its own CLEAN",
       "", {}, bind::flag([](R& r) -> auto& { return r.settings.join_channels; })},
      {"--join-polarizations", S::kCube, cube,
       "Cubes: find peaks on the sum of squares over the Stokes planes, components in all of them (WSClean's "
       "-join-polarizations)",
       "", {}, bind::flag([](R& r) -> auto& { return r.settings.join_polarizations; })},
      {"--fit-spectral-pol", S::kCube, cube,
       "--join-channels: fit each component's channel fluxes with a polynomial of N terms in frequency before "
       "subtracting (WSClean's -fit-spectral-pol)",
       "", at_least(0), bind::value([](R& r) -> auto& { return r.settings.fit_spectral_pol; })},
      {"--fit-spectral-log-pol", S::kCube, cube,
       "--join-channels: fit each component's channel fluxes with a logarithmic polynomial of N terms (S = S0 "
       "10^(a1 x + a2 x^2 ...), x = log10(nu/nu0)), unweighted: every channel counts alike, as in WSClean's "
       "-fit-spectral-log-pol (--fit-spectral-pol weighs by the channel weights)",
       "", Range{0.0, static_cast<double>(clean::kMaxLogTerms), false, false},
       bind::value([](R& r) -> auto& { return r.settings.fit_spectral_log_pol; })},
      {"--parallel-planes", S::kCube, cube,
       "Cubes: plane groups cleaned at once on each GPU, each on its own stream (0: from the GPU's free memory, at "
       "most 16 over all the GPUs but at least 4 on each, so more than 16 on 5 GPUs or more)",
       "0", at_least(0), bind::value([](R& r) -> auto& { return r.cube.parallel_planes; })},
  };
  return rows;
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::string Range::text() const {
  if (low && high)
    return (low_open ? "(" : "[") + number(*low) + ", " + number(*high) + (high_open ? ")" : "]");
  if (low) return (low_open ? "> " : ">= ") + number(*low);
  if (high) return (high_open ? "< " : "<= ") + number(*high);
  return {};
}

std::string OptionRow::long_name() const {
  const auto at = names.rfind("--");
  return at == std::string::npos ? std::string() : names.substr(at + 2);
}

const std::vector<OptionRow>& option_rows() {
  static const std::vector<OptionRow> rows = make_rows();
  return rows;
}

const OptionRow* find_option_row(const std::string& long_name) {
  for (const OptionRow& row : option_rows())
    if (row.long_name() == long_name) return &row;
  return nullptr;
}

void add_option_rows(CLI::App& app, RunOptions& r, OptionSection section) {
  for (const OptionRow& row : option_rows()) {
    if (row.section != section) continue;
    CLI::Option* opt = row.binding.add(app, r, row.names, row.help);
    if (!row.type_name.empty()) opt->type_name(row.type_name);
    if (row.delimiter) opt->delimiter(row.delimiter);
    if (!row.needs.empty()) opt->needs(app.get_option(row.needs));
    if (!row.group.empty()) opt->group(row.group);
    if (!row.default_text.empty()) opt->capture_default_str();
  }
}

}  // namespace gpuclean::app

#include "app/image/deconvolution_args.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "app/image/wsclean_angle.hpp"
#include "app/outer/outer_loop_run.hpp"
#include "app/outer/wsclean_options.hpp"
#include "clean/errors.hpp"
#include "io/fits_reader.hpp"
#include "app/image/option_number.hpp"

namespace gpuclean::app {
namespace {

using clean::InvalidSettings;

constexpr double kRadToArcsec = 180.0 / M_PI * 3600.0;
constexpr double kRadToDeg = 180.0 / M_PI;

double number(const std::string& option, const std::string& text) { return option_number(option, text); }

std::size_t count(const std::string& option, const std::string& text, std::size_t min) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') throw InvalidSettings(option + " '" + text + "' is not an integer");
  if (v < static_cast<long long>(min))
    throw InvalidSettings(option + " " + text + " must be at least " + std::to_string(min));
  return static_cast<std::size_t>(v);
}

// A gain, as gpuclean's table takes them: (0, 1].
double fraction(const std::string& option, const std::string& text) {
  const double v = number(option, text);
  if (!(v > 0 && v <= 1)) throw InvalidSettings(option + " " + text + " must be in (0, 1]");
  return v;
}

// WSClean's last value wins; CLI11 refuses a value given twice, so an earlier one is replaced.
void set(std::vector<std::string>& args, const std::string& option, const std::vector<std::string>& values) {
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i] == option) {
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                 args.begin() + static_cast<std::ptrdiff_t>(i + 1 + values.size()));
      break;
    }
  args.push_back(option);
  args.insert(args.end(), values.begin(), values.end());
}

std::string shortest(double v) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
}

// Refused as the hook refuses them: gpuclean has no such deconvolver or rule.
bool refused(const std::string& name) {
  for (const char* r : {"iuwt", "moresane-ext", "link-polarizations", "force-spectrum", "stop-negative",
                        "horizon-mask", "casa-mask"})
    if (name == r) return true;
  return false;
}

}  // namespace

const std::vector<DeconvolutionHelp>& deconvolution_help() {
  static const std::vector<DeconvolutionHelp> table = {
      {"niter", 1, "N: most CLEAN components over all major cycles (default 0: image only)"},
      {"nmiter", 1, "N: most major cycles (default 20; 0: no limit)"},
      {"gain", 1, "G: loop gain of each component, in (0, 1] (default 0.1)"},
      {"mgain", 1, "G: a major cycle ends once the peak fell by this fraction, in (0, 1] (default 1: one cycle)"},
      {"threshold", 1, "FLUX: stop at this peak residual (Jy unless a unit is given: 1mJy, 20µJy; default 0)"},
      {"auto-threshold", 1, "S: stop at S x the residual's robust noise (default off)"},
      {"auto-mask", 1, "S: clean unmasked to S sigma, then inside the components' mask (default off)"},
      {"local-rms", 0, "thresholds against a local noise map"},
      {"local-rms-window", 1, "N: the local noise window in beams (default 25; turns -local-rms on)"},
      {"local-rms-method", 1, "rms | mad: the local noise map's method (default rms)"},
      {"fits-mask", 1, "FILE: clean only where this FITS image (the images' size) is non-zero"},
      {"clean-border", 1, "P: leave P% of the size uncleaned on each side (default 0)"},
      {"no-negative", 0, "no negative components"},
      {"negative", 0, "negative components allowed (the default; undoes an earlier -no-negative)"},
      {"multiscale", 0, "multiscale CLEAN"},
      {"multiscale-scales", 1, "S1,S2,...: scale sizes in pixels (default: from the theoretical beam)"},
      {"multiscale-scale-bias", 1, "B: scale bias in (0, 1] (default 0.6)"},
      {"multiscale-max-scales", 1, "N: most automatic scales (default 0: no limit)"},
      {"multiscale-shape", 1, "tapered-quadratic | gaussian: scale kernel (default tapered-quadratic)"},
      {"multiscale-gain", 1, "G: a scale's minor cycle ends once its peak fell by this fraction (default 0.2)"},
      {"join-channels", 0, "find peaks on the output channels' weighted mean"},
      {"fit-spectral-pol", 1, "N >= 1: fit joined components' spectra with N polynomial terms"},
      {"fit-spectral-log-pol", 1, "N >= 1: the same with a logarithmic polynomial"},
      {"deconvolution-channels", 1, "M: clean M channels averaged from -channels-out (needs a spectral fit if fewer)"},
      {"squared-channel-joining", 0, "refused: gpuclean finds joined peaks on the channels' weighted mean only"},
      {"save-source-list", 0, "write NAME-sources.txt (multiscale scales then Gaussian, as WSClean)"},
      {"parallel-deconvolution", 1, "N: accepted; the GPU cleans the whole image at once"},
      {"beam-size", 1, "ANGLE: restoring beam FWHM (arcseconds unless a unit is given)"},
      {"beam-shape", 3, "MAJ MIN PA: restoring beam (arcseconds, arcseconds, degrees unless units are given)"},
      {"no-update-model-required", 0, "leave MODEL_DATA as it is"},
      {"update-model-required", 0, "write the final model's visibilities to MODEL_DATA (the default)"},
      {"no-fast-subminor", 0, "accepted, no effect"},
      {"no-multiscale-fast-subminor", 0, "accepted, no effect"},
      {"deconvolution-threads", 1, "N: accepted, no effect (-j sets the threads)"},
      {"reorder", 0, "accepted, no effect"},
      {"no-reorder", 0, "accepted, no effect"},
      {"iuwt", 0, "refused: gpuclean has Clark, Hogbom and multiscale"},
      {"moresane-ext", 1, "refused"},
      {"link-polarizations", 1, "refused"},
      {"force-spectrum", 1, "refused"},
      {"stop-negative", 0, "refused"},
      {"horizon-mask", 1, "refused"},
      {"casa-mask", 1, "refused: give a -fits-mask"},
  };
  return table;
}

double parse_flux_density(const std::string& text, const std::string& option) {
  // aocommon's FindNumberEnd: blanks, sign, digits, point, digits, exponent; then blanks and a unit.
  std::size_t end = 0;
  auto digits = [&] {
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  };
  while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
  const std::size_t start = end;
  if (end < text.size() && text[end] == '-') ++end;
  digits();
  if (end < text.size() && text[end] == '.') ++end;
  digits();
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    ++end;
    if (end < text.size() && (text[end] == '-' || text[end] == '+')) ++end;
    digits();
  }
  char* number_end = nullptr;
  const std::string number_text = text.substr(start, end - start);
  const double v = std::strtod(number_text.c_str(), &number_end);
  if (number_text.empty() || *number_end != '\0' || !std::isfinite(v))
    throw InvalidSettings(option + " '" + text + "' is not a flux density (e.g. 0.01, 10mJy)");
  while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
  const std::string unit = text.substr(end);
  std::string lower = unit;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.empty() || lower == "jy" || lower == "jansky") return v;
  if (unit == "mJy" || unit == "mjy" || lower == "millijansky") return v * 1e-3;
  if (unit == "KJy" || unit == "kjy" || lower == "kilojansky") return v * 1e3;
  if (unit == "µJy" || unit == "µjy" || lower == "microjansky") return v * 1e-6;
  if (unit == "nJy" || unit == "njy" || lower == "nanojansky") return v * 1e-9;
  throw InvalidSettings(option + " '" + text + "': unknown unit '" + unit + "' (Jy, mJy, µJy, nJy or KJy)");
}

DeconvolutionOptions finish_deconvolution(const DeconvolutionWords& given, std::size_t channels_out,
                                          std::size_t width, std::size_t height) {
  DeconvolutionOptions out;
  std::vector<std::string> wsclean = {"wsclean"};  // carried_options' argv: [0] is the program
  std::vector<std::string> args;                   // gpuclean's own options
  bool auto_threshold_given = false, multiscale = false, multiscale_options = false, gaussian = false;
  const std::vector<std::string>& w = given.words;
  for (std::size_t i = 0; i < w.size();) {
    const std::string option = w[i], name = option.substr(1);
    std::size_t arity = 0;
    for (const DeconvolutionHelp& h : deconvolution_help())
      if (name == h.name) arity = h.arity;
    const std::vector<std::string> v(w.begin() + static_cast<std::ptrdiff_t>(i + 1),
                                     w.begin() + static_cast<std::ptrdiff_t>(i + 1 + arity));
    i += 1 + arity;
    if (refused(name)) throw InvalidSettings(option + " is not offered by gpuclean image (gpuclean image -help lists what is)");
    if (name == "niter") out.niter = count(option, v[0], 0);
    else if (name == "nmiter") out.nmiter = count(option, v[0], 0);
    else if (name == "gain") set(args, "--gain", {shortest(fraction(option, v[0]))});
    else if (name == "mgain") out.mgain = fraction(option, v[0]);
    else if (name == "threshold") {
      const double t = parse_flux_density(v[0], option);
      if (t < 0) throw InvalidSettings(option + " " + v[0] + " must not be negative");
      set(args, "--threshold", {shortest(t)});
    } else if (name == "auto-threshold") {
      if (number(option, v[0]) < 0) throw InvalidSettings(option + " " + v[0] + " must not be negative");
      set(args, "--auto-threshold", {v[0]});
      auto_threshold_given = true;
    } else if (name == "join-channels") set(args, "--join-channels", {});
    else if (name == "fit-spectral-pol" || name == "fit-spectral-log-pol") {
      count(option, v[0], 1);  // 0 terms fits nothing: refused rather than silently unjoined
      wsclean.insert(wsclean.end(), {option, v[0]});
    } else if (name == "deconvolution-channels") out.deconvolution_channels = count(option, v[0], 1);
    else if (name == "squared-channel-joining")  // parsed for the help and the hook's table; not cleaned so
      throw InvalidSettings(option + " is not supported by gpuclean image yet: joined peaks are found on the "
                            "channels' weighted mean; leave it out");
    else if (name == "save-source-list") out.save_source_list = gaussian = true;
    else if (name == "no-update-model-required") out.update_model_required = false;
    else if (name == "update-model-required") out.update_model_required = true;
    else if (name == "parallel-deconvolution") {
      out.parallel_deconvolution = count(option, v[0], 0);
      out.notes.push_back(option + " " + v[0] + ": the GPU cleans the whole image at once");
    } else if (name == "beam-size") {
      const double fwhm = parse_wsclean_angle(v[0], option, AngleUnit::kArcseconds) * kRadToArcsec;
      if (!(fwhm > 0)) throw InvalidSettings(option + " " + v[0] + " must be positive");
      out.settings.beam_shape = clean::BeamShape{fwhm, fwhm, 0.0};
    } else if (name == "beam-shape") {
      const double maj = parse_wsclean_angle(v[0], option, AngleUnit::kArcseconds) * kRadToArcsec;
      const double min = parse_wsclean_angle(v[1], option, AngleUnit::kArcseconds) * kRadToArcsec;
      const double pa = parse_wsclean_angle(v[2], option, AngleUnit::kDegrees) * kRadToDeg;
      if (!(maj > 0 && min > 0)) throw InvalidSettings(option + " " + v[0] + " " + v[1] + ": the axes must be positive");
      out.settings.beam_shape = clean::BeamShape{maj, min, pa};
    } else if (name == "no-fast-subminor" || name == "no-multiscale-fast-subminor" || name == "deconvolution-threads" ||
               name == "reorder" || name == "no-reorder") {
      if (arity == 1) count(option, v[0], 0);
    } else {
      // The rows of the option table that WSClean's command line reaches (app/outer): by its names.
      if (name == "multiscale") multiscale = true;
      if (name.rfind("multiscale-", 0) == 0) multiscale_options = true;
      if (name == "multiscale-shape") gaussian = false;
      if (name == "local-rms-window") wsclean.push_back("-local-rms");  // WSClean: the window turns it on
      wsclean.push_back(option);
      wsclean.insert(wsclean.end(), v.begin(), v.end());
    }
  }
  const std::vector<std::string> carried = carried_options(wsclean, {});
  args.insert(args.end(), carried.begin(), carried.end());
  // WSClean 3.1's defaults where gpuclean's differ: no auto-threshold, and -niter over all rounds.
  if (!auto_threshold_given) args.insert(args.end(), {"--auto-threshold", "0"});
  args.insert(args.end(), {"--niter", std::to_string(out.niter)});
  // WSClean ignores the -multiscale-* options without -multiscale; gpuclean's table needs it, so
  // they are checked with it and then switched off.
  if (multiscale_options && !multiscale) args.push_back("--multiscale");
  try {
    OuterLoopOptions parsed = parse_outer_loop_options(args);
    const auto beam = out.settings.beam_shape;
    out.settings = parsed.settings;
    out.settings.beam_shape = beam;
    out.fits_mask = parsed.fits_mask;
  } catch (const InvalidSettings&) {
    throw;
  } catch (const std::exception& e) {  // CLI11's messages name gpuclean's options (--gain ...)
    throw InvalidSettings(std::string("deconvolution options: ") + e.what());
  }
  if (!multiscale) out.settings.multiscale.enabled = false;
  if (multiscale && gaussian) out.settings.multiscale.shape = clean::ScaleShape::kGaussian;  // as WSClean 3.1
  const std::size_t m = out.deconvolution_channels;
  if (m > channels_out)
    throw InvalidSettings("-deconvolution-channels " + std::to_string(m) + " is more than -channels-out " +
                          std::to_string(channels_out));
  if (m != 0 && m != channels_out && out.settings.spectral_fit().terms == 0)
    throw InvalidSettings("-deconvolution-channels " + std::to_string(m) + " < -channels-out " +
                          std::to_string(channels_out) +
                          " needs a spectral fit (-fit-spectral-pol or -fit-spectral-log-pol), as WSClean 3.1");
  if (!out.fits_mask.empty()) {
    const io::FitsImage shape = io::read_fits_shape(out.fits_mask);  // missing or not FITS: exit 3
    if (width != 0 && (shape.width != width || shape.height != height))
      throw clean::InvalidInput("-fits-mask '" + out.fits_mask + "' is " + std::to_string(shape.width) + " x " +
                                std::to_string(shape.height) + " pixels; the images are " + std::to_string(width) +
                                " x " + std::to_string(height));
  }
  return out;
}

}  // namespace gpuclean::app

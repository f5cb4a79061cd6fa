#include "app/image/image_args.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "app/image/source_list.hpp"
#include "app/wsclean/wsclean_option.hpp"
#include "clean/errors.hpp"
#include "imaging/grid_plan.hpp"
#include "io/fits_reader.hpp"

namespace gpuclean::app {
namespace {

using clean::InvalidSettings;

constexpr double kFinestAccuracy = 1e-5;  // the float grid's floor (WSClean goes double below 1.01e-5)
constexpr double kCoarsestAccuracy = 1e-1;

// clean::validate names the single command's options ("--gain"); here they are WSClean's.
std::string with_one_dash(std::string message) {
  for (std::size_t at = message.find("--"); at != std::string::npos; at = message.find("--", at + 1))
    if (at + 2 < message.size() && std::isalpha(static_cast<unsigned char>(message[at + 2]))) message.erase(at, 1);
  return message;
}

// -gridder and its relatives: the accuracy they stand for, and one note saying so.
void resolve_gridder(ImageOptions& o) {
  const double accuracy = o.gridder_accuracy.value_or(o.gridder == "direct-ft" ? kFinestAccuracy : 1e-4);
  if (accuracy < kFinestAccuracy || accuracy > kCoarsestAccuracy) {
    std::ostringstream s;
    s << "-wgridder-accuracy " << accuracy << " is outside what gpuclean's gridder reaches (1e-5 to 0.1: its grid "
      << "is float); give a value in that range";
    throw InvalidSettings(s.str());
  }
  o.run.epsilon = accuracy;
  if (o.gridder.empty() && !o.gridder_accuracy) return;
  std::ostringstream s;
  s << (o.gridder.empty() ? "-wgridder-accuracy" : "-gridder " + o.gridder)
    << ": gpuclean's own gridder (w-stacking with an ES kernel, WSClean's wgridder method) at accuracy " << accuracy;
  if (o.gridder == "direct-ft" && !o.gridder_accuracy) s << ", its finest, for a direct transform";
  if (o.gridder == "wstacking" || o.gridder == "idg" || o.gridder == "facet-idg")
    s << " (WSClean's " << o.gridder << " gridder states no accuracy; 1e-4 is the wgridder's default)";
  o.notes.push_back(s.str());
}

// -fit-spectral-pol N (or -log-pol) over fewer planes than N: WSClean 3.1 runs it, its fitters
// (schaapcommon) fitting as many terms as there are planes and leaving the others 0, which the
// source list then shows; gpuclean's fit does the same (clean/spectral_fit.hpp), said in one note.
// The planes are the joined output channels, or the -deconvolution-channels M averaged from them.
void note_short_fit(ImageOptions& o) {
  const clean::CleanSettings& s = o.deconvolution.settings;
  const clean::SpectralFitSettings fit = s.spectral_fit();
  if (fit.terms == 0 || !s.join_channels || o.niter == 0 || o.predict) return;
  const std::size_t m = o.deconvolution.deconvolution_channels;
  const bool averaged = m != 0 && m < o.run.channels_out;
  const std::size_t planes = averaged ? m : o.run.channels_out;
  if (fit.terms <= planes) return;
  o.notes.push_back(std::string(fit.logarithmic ? "-fit-spectral-log-pol " : "-fit-spectral-pol ") +
                    std::to_string(fit.terms) + " over " + std::to_string(planes) +
                    (averaged ? " deconvolution channels" : " joined channels") + ": " + std::to_string(planes) +
                    " terms are fitted and the others are 0, as in WSClean (a fit has at most one term per channel)");
}

}  // namespace

// The gridder's field must stay inside the horizon: l² + m² < 1 at the image's corner
// (imaging/grid_plan.cpp), known from -size and -scale alone. WSClean 3.1 runs such a field;
// gpuclean's w-stacking cannot, and says so before any MS is opened (it said so after the read).
void check_image_horizon(const imaging::ImageGeometry& g) {
  const double l = imaging::pixel_l(g, 0), m = imaging::pixel_m(g, 0);
  if (l * l + m * m < 1) return;
  std::ostringstream text;
  text << "-size " << g.width << " " << g.height << " at -scale " << g.scale * (180 / M_PI) * 3600 << "asec spans "
       << static_cast<double>(std::max(g.width, g.height)) * g.scale * (180 / M_PI)
       << " degrees: its corners lie past the horizon (l^2 + m^2 = " << l * l + m * m
       << " >= 1), which gpuclean's w-stacking gridder cannot image; give a smaller -size or -scale";
  throw InvalidSettings(text.str());
}

namespace {

// The rules between options, as WSClean checks them (W31:main/settings.cpp Validate), and the
// settings that follow from several options.
void finish(ImageOptions& o, bool size_given, bool scale_given) {
  DeconvolutionOptions& d = o.deconvolution;
  clean::CleanSettings& s = d.settings;
  if (!size_given && !o.predict) throw InvalidSettings("-size W H is required");
  if (!scale_given && !o.predict) throw InvalidSettings("-scale is required (e.g. -scale 4asec)");
  if (o.ms.empty()) throw InvalidSettings("no MeasurementSet given: gpuclean image [options] a.ms [b.ms ...]");
  s.niter = d.niter;
  o.niter = static_cast<long long>(d.niter);
  // W31:main/commandline.cpp: mfWeighting = (joined channels && !-no-mf-weighting) || -mf-weighting,
  // whatever -niter is: the channels' weights are then one grid's.
  if (s.join_channels && !o.no_mf_weighting) o.run.mf_weighting = true;
  if (s.join_channels && o.run.channels_out == 1 && !o.predict)
    throw InvalidSettings("-join-channels with -channels-out 1 has no channels to join; give -channels-out N > 1 "
                          "or leave -join-channels out (WSClean refuses it too)");
  if (o.predict && s.join_channels)
    throw InvalidSettings("-predict with -join-channels: a prediction joins nothing; leave -join-channels out");
  if (o.predict && o.pols.size() > 1)
    throw InvalidSettings("-predict with several polarizations is not supported yet; predict one at a time "
                          "(-pol I, Q, U, V, XX, ...: each goes into MODEL_DATA's correlations as WSClean writes it)");
  const bool xy = std::find(o.pols.begin(), o.pols.end(), io::ms::PolRequest::kXY) != o.pols.end();
  if (xy && o.niter > 0 && !o.predict)  // W31:main/settings.cpp checkPolarizations
    throw InvalidSettings("-pol with XY and YX and -niter > 0 needs -join-polarizations in WSClean, which gpuclean "
                          "does not take yet; give -niter 0, or image Stokes U and V (-pol uv), the same images");
  // The CPU deconvolution's threads: -deconvolution-threads, else -j.
  s.threads = o.resources.deconvolution_threads > 0 ? static_cast<int>(o.resources.deconvolution_threads)
                                                      : o.run.threads;
  try {
    clean::validate(s);
  } catch (const InvalidSettings& e) {
    throw InvalidSettings(with_one_dash(e.what()));
  }
  const std::size_t m = d.deconvolution_channels;
  if (m > o.run.channels_out)
    throw InvalidSettings("-deconvolution-channels " + std::to_string(m) + " is more than -channels-out " +
                          std::to_string(o.run.channels_out));
  if (m != 0 && m != o.run.channels_out && s.spectral_fit().terms == 0)
    throw InvalidSettings("-deconvolution-channels " + std::to_string(m) + " < -channels-out " +
                          std::to_string(o.run.channels_out) +
                          " needs a spectral fit (-fit-spectral-pol or -fit-spectral-log-pol), as WSClean 3.1");
  note_short_fit(o);
  // WSClean 3.1's refusals of -save-source-list (also made where the list is written).
  if (d.save_source_list && o.niter > 0 && !o.predict)
    check_source_list(s, s.join_channels ? o.run.channels_out : 1,
                      o.pols.size() == 1 && o.pols.front() == io::ms::PolRequest::kI);
  if (!o.json.empty() && (o.niter == 0 || o.predict))
    throw InvalidSettings("-json writes the summary of a deconvolution run: give -niter > 0 (and no -predict)");
  if (d.save_source_list && o.niter == 0 && !o.predict)  // WSClean 3.1's refusal
    throw InvalidSettings("-save-source-list needs -niter > 0: a source list cannot be saved without cleaning");
  if (o.make_psf_only && o.niter > 0)
    throw InvalidSettings("-make-psf-only makes no image to clean: leave -niter out or drop -make-psf-only");
  if (!o.beam.fit && !o.beam.theoretic && !s.beam_shape && o.niter > 0)
    throw InvalidSettings("-no-fit-beam leaves the restoring beam undefined (WSClean writes NaN): add "
                          "-theoretic-beam or -beam-size");
  if (d.save_first_residual && d.deconvolution_channels != 0 && d.deconvolution_channels != o.run.channels_out)
    throw InvalidSettings("-save-first-residual with -deconvolution-channels is not supported yet; leave one out");
  if (d.skip_final_iteration && o.niter == 0)
    throw InvalidSettings("-skip-final-iteration without -niter: there is no deconvolution to skip after");
  // WSClean's sub-minor loop keeps every pixel above its threshold (W31:deconvolution/subminorloop.h):
  // Clark's active set is not cut at AIPS's MAXPIXEL here. Cut at 20050, a deep round that runs
  // into -niter cleans other pixels than WSClean (oxkat's flag step: residual 2.1 % above WSClean's,
  // against 0.02 % uncut). The set's GPU buffers take about 60 bytes a member, so it is cut at
  // 2^22 pixels (250 MB), beyond which a round takes more of Clark's cycles.
  constexpr std::size_t kLargestSet = std::size_t{1} << 22;
  if (size_given) s.select_k = std::min(o.run.image.width * o.run.image.height, kLargestSet);
  if (size_given && scale_given) check_image_horizon(o.run.image);
  o.run.deconvolution = o.niter > 0 && !o.predict;
  resolve_gridder(o);
  o.run.host_memory_fraction = std::min(o.resources.mem_percent / 100.0, 1.0);
  o.run.host_memory_bytes = o.resources.abs_mem_gb * 1024.0 * 1024.0 * 1024.0;
  if (!d.fits_mask.empty()) {
    const io::FitsImage shape = io::read_fits_shape(d.fits_mask);  // missing or not FITS: exit 3
    if (size_given && (shape.width != o.run.image.width || shape.height != o.run.image.height))
      throw clean::InvalidInput("-fits-mask '" + d.fits_mask + "' is " + std::to_string(shape.width) + " x " +
                                std::to_string(shape.height) + " pixels; the images are " +
                                std::to_string(o.run.image.width) + " x " + std::to_string(o.run.image.height));
  }
}

}  // namespace

ImageOptions parse_image_args(const std::vector<std::string>& args) {
  ImageOptions o;
  o.deconvolution.settings.auto_threshold = 0.0;  // WSClean has none by default
  bool size_given = false, scale_given = false;
  const ReadCommandLine line = read_wsclean_command_line(args, true);
  for (const ReadOption& read : line.options) {
    const WscleanOption& row = *read.row;
    if (row.image == ImageUse::kRefused)
      throw InvalidSettings(read.given.option + " is not offered by gpuclean image: " + row.gpuclean);
    if (row.image == ImageUse::kNotYet) throw InvalidSettings(read.given.option + " is " + row.gpuclean);
    row.apply(o, read.given);
    size_given |= row.name() == "size";
    scale_given |= row.name() == "scale";
  }
  o.ms = line.others;
  if (o.help || o.version) return o;
  finish(o, size_given, scale_given);
  return o;
}

std::string image_usage() {
  return "usage: gpuclean image [options] a.ms [b.ms ...]\n"
         "  WSClean's options (one dash or two), with what gpuclean does with each; WSClean 3.1's defaults:\n" +
         wsclean_options_usage();
}

std::string weight_mode_text(const imaging::WeightingSettings& w) {
  switch (w.mode) {
    case imaging::WeightMode::kNatural: return "natural";
    case imaging::WeightMode::kUniform: return "uniform";
    case imaging::WeightMode::kBriggs: {
      std::ostringstream s;  // WSClean streams the double with the default precision
      s << "Briggs'(" << w.briggs_robustness << ")";
      return s.str();
    }
  }
  return "";
}

}  // namespace gpuclean::app

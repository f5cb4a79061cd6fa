#include "app/image/image_args.hpp"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>

#include "app/image/wsclean_angle.hpp"
#include "clean/errors.hpp"
#include "io/ms/stokes.hpp"
#include "app/image/option_number.hpp"

namespace gpuclean::app {
namespace {

using clean::InvalidSettings;
using Values = std::vector<std::string>;

double number(const std::string& option, const std::string& text) { return option_number(option, text); }

long long integer(const std::string& option, const std::string& text, long long min) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') throw InvalidSettings(option + " '" + text + "' is not an integer");
  if (v < min) throw InvalidSettings(option + " " + text + " must be at least " + std::to_string(min));
  return v;
}

struct Row {
  const char* name;
  std::size_t arity;  ///< values after the option (weight: 1, or 2 for briggs, handled in place)
  const char* help;
  std::function<void(ImageOptions&, const Values&)> apply;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {"name", 1, "NAME: output prefix (NAME-dirty.fits, NAME-psf.fits)",
       [](ImageOptions& o, const Values& v) {
         if (v[0].empty()) throw InvalidSettings("-name must not be empty");
         o.name = v[0];
       }},
      {"size", 2, "W H: image size in pixels",
       [](ImageOptions& o, const Values& v) {
         o.run.image.width = static_cast<std::size_t>(integer("-size", v[0], 2));
         o.run.image.height = static_cast<std::size_t>(integer("-size", v[1], 2));
       }},
      {"scale", 1, "ANGLE: pixel size (degrees unless a unit is given: 4asec, 0.1amin)",
       [](ImageOptions& o, const Values& v) {
         o.run.image.scale = parse_wsclean_angle(v[0], "-scale", AngleUnit::kDegrees);
         if (!(o.run.image.scale > 0)) throw InvalidSettings("-scale must be positive");
       }},
      {"padding", 1, "P: weight-grid padding (default 1.2)",
       [](ImageOptions& o, const Values& v) {
         o.run.padding = number("-padding", v[0]);
         if (o.run.padding < 1) throw InvalidSettings("-padding must be at least 1");
       }},
      {"data-column", 1, "COLUMN: DATA or CORRECTED_DATA (default: CORRECTED_DATA when present)",
       [](ImageOptions& o, const Values& v) { o.selection.data_column = v[0]; }},
      {"field", 1, "ID: the field to image (default: the only one with rows)",
       [](ImageOptions& o, const Values& v) {
         if (v[0] == "all") throw InvalidSettings("-field all is not supported yet: give one field id");
         o.selection.field = static_cast<int>(integer("-field", v[0], 0));
       }},
      {"channels-out", 1, "N: output channels, plus MFS images when N > 1",
       [](ImageOptions& o, const Values& v) {
         o.run.channels_out = static_cast<std::size_t>(integer("-channels-out", v[0], 1));
       }},
      {"channel-range", 2, "S E: image channels [S, E) only",
       [](ImageOptions& o, const Values& v) {
         o.selection.channel_begin = static_cast<std::size_t>(integer("-channel-range", v[0], 0));
         o.selection.channel_end = static_cast<std::size_t>(integer("-channel-range", v[1], 0));
         if (*o.selection.channel_end <= *o.selection.channel_begin)
           throw InvalidSettings("-channel-range " + v[0] + " " + v[1] + " is empty (the end is exclusive)");
       }},
      {"pol", 1, "P: i (default), xx, yy, rr or ll",
       [](ImageOptions& o, const Values& v) { o.selection.pol = io::ms::parse_pol(v[0]); }},
      {"weight", 1, "natural | uniform | briggs R (default uniform)",
       [](ImageOptions& o, const Values& v) {
         if (v[0] == "natural") o.run.weighting.mode = imaging::WeightMode::kNatural;
         else if (v[0] == "uniform") o.run.weighting.mode = imaging::WeightMode::kUniform;
         else if (v[0] == "briggs") {
           o.run.weighting.mode = imaging::WeightMode::kBriggs;
           o.run.weighting.briggs_robustness = number("-weight briggs", v.at(1));
         } else {
           throw InvalidSettings("-weight '" + v[0] + "': natural, uniform or briggs R");
         }
       }},
      {"weighting-rank-filter", 1, "L: uniform/Briggs rank filter level (default 3; < 1: none)",
       [](ImageOptions& o, const Values& v) { o.run.weighting.rank_filter_level = number("-weighting-rank-filter", v[0]); }},
      {"weighting-rank-filter-size", 1, "N: its window in cells (default 16)",
       [](ImageOptions& o, const Values& v) {
         o.run.weighting.rank_filter_size = static_cast<std::size_t>(integer("-weighting-rank-filter-size", v[0], 1));
       }},
      {"taper-gaussian", 1, "ANGLE: Gaussian uv taper FWHM (arcseconds unless a unit is given)",
       [](ImageOptions& o, const Values& v) {
         o.run.weighting.gaussian_taper_fwhm_rad = parse_wsclean_angle(v[0], "-taper-gaussian", AngleUnit::kArcseconds);
         if (o.run.weighting.gaussian_taper_fwhm_rad < 0) throw InvalidSettings("-taper-gaussian must not be negative");
       }},
      {"mf-weighting", 0, "one weight grid over all output channels (default with -join-channels)",
       [](ImageOptions& o, const Values&) { o.run.mf_weighting = true; }},
      {"no-mf-weighting", 0, "undoes -join-channels' -mf-weighting (not a given -mf-weighting, as WSClean)",
       [](ImageOptions&, const Values&) {}},  // read in parse_image_args
      {"predict", 0, "NAME-model.fits (NAME-000c-model.fits per output channel) -> MODEL_DATA, as wsclean -predict",
       [](ImageOptions& o, const Values&) { o.predict = true; }},
      {"make-psf", 0, "also image the PSF (NAME-psf.fits); normalises as WSClean does",
       [](ImageOptions& o, const Values&) { o.run.make_psf = true; }},
      {"j", 1, "N: threads (default: all cores)",
       [](ImageOptions& o, const Values& v) { o.run.threads = static_cast<int>(integer("-j", v[0], 1)); }},
      {"no-small-inversion", 0, "accepted: inversion is always at full resolution", [](ImageOptions&, const Values&) {}},
      {"use-wgridder", 0, "accepted: the gridder is always w-stacking with an ES kernel", [](ImageOptions&, const Values&) {}},
      {"device", 1, "auto|gpu|cpu: where to grid (gpuclean's own; default auto: the GPU when there is one)",
       [](ImageOptions& o, const Values& v) {
         if (v[0] == "auto") o.device = clean::Device::kAuto;
         else if (v[0] == "gpu") o.device = clean::Device::kGpu;
         else if (v[0] == "cpu") o.device = clean::Device::kCpu;
         else throw InvalidSettings("-device '" + v[0] + "' is not one of auto, gpu, cpu");
       }},
      {"max-gpus", 1, "N: spread the output channels over at most N of the visible GPUs (gpuclean's own; default 0: all)",
       [](ImageOptions& o, const Values& v) { o.max_gpus = static_cast<std::size_t>(integer("-max-gpus", v[0], 0)); }},
      {"json", 1, "FILE: the run's JSON summary (- for stdout; with -niter > 0)",
       [](ImageOptions& o, const Values& v) { o.json = v[0]; }},
      {"help", 0, "this list", [](ImageOptions& o, const Values&) { o.help = true; }},
  };
  return table;
}

const Row* find_row(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return nullptr;
  const std::string name = word.substr(word[1] == '-' ? 2 : 1);
  for (const Row& r : rows())
    if (name == r.name) return &r;
  return nullptr;
}

const DeconvolutionHelp* find_deconvolution(const std::string& word) {
  const std::string name = word.substr(word[1] == '-' ? 2 : 1);
  for (const DeconvolutionHelp& d : deconvolution_help())
    if (name == d.name) return &d;
  return nullptr;
}

}  // namespace

ImageOptions parse_image_args(const std::vector<std::string>& args) {
  ImageOptions o;
  DeconvolutionWords deconvolution;
  bool size_given = false, scale_given = false, no_mf_weighting = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word.size() > 1 && word[0] == '-') {
      const Row* row = find_row(word);
      if (!row) {
        const DeconvolutionHelp* d = find_deconvolution(word);
        if (!d) throw InvalidSettings("unknown option " + word + " (gpuclean image -help lists them)");
        if (i + d->arity >= args.size())
          throw InvalidSettings(word + " needs " + std::to_string(d->arity) + " value(s)");
        deconvolution.words.push_back(std::string("-").append(d->name));  // one dash, as WSClean
        for (std::size_t k = 1; k <= d->arity; ++k) deconvolution.words.push_back(args[i + k]);
        i += d->arity;
        continue;
      }
      std::size_t arity = row->arity;
      if (std::string(row->name) == "weight" && i + 1 < args.size() && args[i + 1] == "briggs") arity = 2;
      if (i + arity >= args.size()) throw InvalidSettings(word + " needs " + std::to_string(arity) + " value(s)");
      const Values values(args.begin() + static_cast<std::ptrdiff_t>(i + 1),
                          args.begin() + static_cast<std::ptrdiff_t>(i + 1 + arity));
      row->apply(o, values);
      size_given |= std::string(row->name) == "size";
      scale_given |= std::string(row->name) == "scale";
      no_mf_weighting |= std::string(row->name) == "no-mf-weighting";
      i += arity;
    } else {
      o.ms.push_back(word);
    }
  }
  if (o.help) return o;
  if (!size_given && !o.predict) throw InvalidSettings("-size W H is required");
  if (!scale_given && !o.predict) throw InvalidSettings("-scale is required (e.g. -scale 4asec)");
  if (o.ms.empty()) throw InvalidSettings("no MeasurementSet given: gpuclean image [options] a.ms [b.ms ...]");
  o.deconvolution = finish_deconvolution(deconvolution, o.run.channels_out, size_given ? o.run.image.width : 0,
                                         size_given ? o.run.image.height : 0);
  // WSClean 3.1 (main/commandline.cpp): mfWeighting = (joined channels && !-no-mf-weighting) ||
  // -mf-weighting, whatever -niter is: the channels' weights are then one grid's.
  if (o.deconvolution.settings.join_channels && !no_mf_weighting) o.run.mf_weighting = true;
  o.niter = static_cast<long long>(o.deconvolution.niter);
  if (!o.json.empty() && (o.niter == 0 || o.predict))
    throw InvalidSettings("-json writes the summary of a deconvolution run: give -niter > 0 (and no -predict)");
  if (o.deconvolution.save_source_list && o.niter == 0 && !o.predict)  // WSClean 3.1's refusal
    throw InvalidSettings("-save-source-list needs -niter > 0: a source list cannot be saved without cleaning");
  // With -predict WSClean takes the size and scale from the model and ignores -niter.
  return o;
}

std::string image_usage() {
  std::ostringstream s;
  s << "usage: gpuclean image [options] a.ms [b.ms ...]\n  WSClean's option names (one dash or two):\n";
  for (const Row& r : rows()) s << "  -" << r.name << "  " << r.help << "\n";
  s << "  Deconvolution (WSClean 3.1's defaults):\n";
  for (const DeconvolutionHelp& d : deconvolution_help()) s << "  -" << d.name << "  " << d.help << "\n";
  return s.str();
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

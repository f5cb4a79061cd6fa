#pragma once
// `gpuclean image`'s command line: WSClean's option names, single dash (a double dash is accepted
// too, as WSClean does), parsed by a table of (name, arity, handler). Every value is checked here,
// before any MS is opened.
#include <string>
#include <vector>

#include "app/image/deconvolution_args.hpp"
#include "clean/clean_settings.hpp"
#include "imaging/image_run.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::app {

struct ImageOptions {
  std::string name = "wsclean";  ///< -name: the output prefix (WSClean's default)
  std::vector<std::string> ms;   ///< the MeasurementSets, in order
  imaging::ImageRunSettings run;
  io::ms::SelectionRequest selection;
  bool help = false;
  /// -predict: NAME[-000c]-model.fits → MODEL_DATA; -size and -scale may then come from the model
  /// (zero here), and -niter and -make-psf are ignored, as WSClean ignores them.
  bool predict = false;
  long long niter = 0;  ///< -niter (the same as deconvolution.niter)
  /// -niter, -gain, -mgain, -threshold ... (deconvolution_args.hpp): parsed and checked; WSClean
  /// 3.1's defaults.
  DeconvolutionOptions deconvolution;
  /// -device (gpuclean's own): where to grid; resolved by clean::resolve_device into run.device.
  clean::Device device = clean::Device::kAuto;
  /// -max-gpus N (gpuclean's own): grid and clean on at most N of the visible GPUs (0: all); the
  /// output channels spread over them (image_gpus.hpp).
  std::size_t max_gpus = 0;
  /// -json FILE (- for stdout): the run's JSON summary (docs/summary-json.md); -niter > 0 only.
  std::string json;
};

/// `args` are the words after "image". Throws clean::InvalidSettings (exit 2) with one sentence
/// for an unknown option, a missing or bad value, an unsupported setting or no MS, and
/// clean::InvalidInput or io::FitsError (exit 3) for a -fits-mask that does not open or fit.
/// -niter > 0 is refused (exit 2) after every value is checked: the loop is issue 36's.
ImageOptions parse_image_args(const std::vector<std::string>& args);

/// The option list for -help.
std::string image_usage();

/// WSCWEIGH's text: natural, uniform or Briggs'(R) (W31:structures/weightmode.h ToString).
std::string weight_mode_text(const imaging::WeightingSettings& w);

}  // namespace gpuclean::app

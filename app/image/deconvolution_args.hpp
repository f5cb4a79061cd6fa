#pragma once
// `gpuclean image`'s deconvolution options (WSClean's names, WSClean 3.1's defaults,
// W31:main/settings.h): gathered word by word while the command line is read, then turned into
// clean::CleanSettings through the option table's WSClean column and the hook's parser
// (app/outer), so that `image` and the hook check the same values with the same rules.
#include <cstddef>
#include <string>
#include <vector>

#include "clean/clean_settings.hpp"

namespace gpuclean::app {

/// What the loop of issue 36 needs beyond the clean settings. Defaults are WSClean 3.1's.
struct DeconvolutionOptions {
  std::size_t niter = 0;            ///< -niter: components over all major cycles (0: image only)
  std::size_t nmiter = 20;          ///< -nmiter: most major cycles (0: no limit)
  double mgain = 1.0;               ///< -mgain: a round ends at (1 - mgain) x its first peak; 1: one round
  /// gain, thresholds (auto-threshold off), masks, multiscale, joins, fits, beam; validated.
  clean::CleanSettings settings;
  std::string fits_mask;             ///< -fits-mask (its size checked against -size)
  std::size_t deconvolution_channels = 0;  ///< -deconvolution-channels (0: -channels-out)
  bool squared_channel_joining = false;    ///< -squared-channel-joining
  bool save_source_list = false;           ///< -save-source-list: NAME-sources.txt
  bool update_model_required = true;       ///< -(no-)update-model-required: MODEL_DATA at the end
  std::size_t parallel_deconvolution = 0;  ///< -parallel-deconvolution N (accepted; see notes)
  std::vector<std::string> notes;          ///< one line each, for the run's first lines
};

/// The words of the deconvolution options, in command-line order, as WSClean spells them (one
/// dash); `finish_deconvolution` turns them into DeconvolutionOptions.
struct DeconvolutionWords {
  std::vector<std::string> words;
};

/// A deconvolution option: its name without dashes, its value count and -help's text.
struct DeconvolutionHelp {
  const char* name;
  std::size_t arity;
  const char* help;
};
/// Every deconvolution option `image` takes (accepted no-ops and refusals too), in -help's order.
const std::vector<DeconvolutionHelp>& deconvolution_help();

/// WSClean's -threshold: a number and an optional unit (Jy, mJy, µJy, nJy, KJy, and the long
/// names; aocommon's FluxDensity::Parse), in Jy. Throws clean::InvalidSettings.
double parse_flux_density(const std::string& text, const std::string& option);

/// Parses and checks the gathered words against `channels_out` and `width` x `height` (the mask's
/// size; 0: unknown). Throws clean::InvalidSettings (exit 2) for a bad value or a rule WSClean
/// 3.1 refuses, clean::InvalidInput or io::FitsError (exit 3) for a -fits-mask that does not
/// open or has another size.
DeconvolutionOptions finish_deconvolution(const DeconvolutionWords& given, std::size_t channels_out,
                                          std::size_t width, std::size_t height);

}  // namespace gpuclean::app

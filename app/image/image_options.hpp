#pragma once
// `gpuclean image`'s settings as data, filled from WSClean's command line by the option table
// (app/wsclean/wsclean_option.hpp) and checked before any MeasurementSet is opened. Defaults are
// WSClean 3.1's (the Debian package); options WSClean 3.1 lacks take WSClean 3.7's meaning when
// given. Plain types only: the table is built without casacore.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "app/run_options.hpp"
#include "clean/clean_settings.hpp"
#include "imaging/image_run.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::app {

/// WSClean 3.7's -major-iteration-mode: what a major iteration does once auto-masking is on.
/// kSingle (WSClean 3.1's only behaviour, gpuclean's default): each ends at -mgain. kDual: the
/// iteration that reaches the auto-mask threshold continues with the mask in the image
/// (radler's CalculateContinuedLoopGain); kFull: likewise with gain 1.
enum class MajorIterationMode { kSingle, kDual, kFull };

/// The deconvolution and its loop. Defaults are WSClean 3.1's (W31:main/settings.h).
struct DeconvolutionOptions {
  std::size_t niter = 0;    ///< -niter: components over all major cycles (0: image only)
  std::size_t nmiter = 20;  ///< -nmiter: most major cycles (0: no limit)
  double mgain = 1.0;       ///< -mgain: a round ends at (1 - mgain) x its first peak; 1: one round
  /// -mgain-boosting B (WSClean 3.7): the first round's gain is 1 - (1 - mgain)^B, the second's
  /// with (B - 1) / 2 + 1; 1: none.
  double mgain_boosting = 1.0;
  /// -auto-mask-nmiter N (WSClean 3.7): at most N major cycles after the auto-mask threshold was
  /// reached; absent: no limit (WSClean 3.1).
  std::optional<std::size_t> auto_mask_nmiter;
  MajorIterationMode major_iteration_mode = MajorIterationMode::kSingle;
  /// -skip-final-iteration (WSClean 3.7): no prediction and re-imaging after the last round; the
  /// residual written is the deconvolver's.
  bool skip_final_iteration = false;
  /// gain, thresholds, masks, multiscale, joins, fits, beam; validated.
  clean::CleanSettings settings;
  bool threshold_given = false, auto_threshold_given = false;
  std::string fits_mask;                   ///< -fits-mask (its size checked against -size)
  std::size_t deconvolution_channels = 0;  ///< -deconvolution-channels (0: -channels-out)
  bool save_source_list = false;           ///< -save-source-list: NAME-sources.txt
  bool update_model_required = true;       ///< -(no-)update-model-required: MODEL_DATA at the end
  /// -parallel-deconvolution N: sub-images of at most N pixels a side, each its own CLEAN within a
  /// major cycle (WSClean's ParallelDeconvolution); 0: the whole image at once.
  std::size_t parallel_deconvolution = 0;
  bool save_first_residual = false;        ///< -save-first-residual: NAME-first-residual.fits
};

/// The restoring beam (WSClean's -beam-*, -circular-beam, -theoretic-beam ...).
struct RestoringBeamOptions {
  double fitting_size = 10.0;  ///< -beam-fitting-size: the fit's box in theoretical beams
  bool circular = false;       ///< -circular-beam: a circular Gaussian is fitted (bmin = bmaj, PA 0)
  bool fit = true;             ///< -no-fit-beam, -theoretic-beam: false (no fit)
  bool theoretic = false;      ///< -theoretic-beam: restore with the theoretical beam (circular)
  bool with_negatives = true;  ///< -fit-beam-without-negatives: false (WSClean 3.7)
};

/// What the host may use (WSClean's -mem, -abs-mem, -j and the thread options).
struct ResourceOptions {
  double mem_percent = 100;      ///< -mem: % of the machine's memory
  double abs_mem_gb = 0;         ///< -abs-mem: GiB (0: no limit)
  std::size_t deconvolution_threads = 0;  ///< -deconvolution-threads (0: -j)
  std::string temp_dir;          ///< -temp-dir: where temporary files go (checked; gpuclean writes none)
};

/// -apply-primary-beam (dish arrays, beam/) and -primary-beam-limit.
struct PrimaryBeamOptions {
  bool apply = false;
  double limit = 0.005;
};

struct ImageOptions {
  std::string name = "wsclean";  ///< -name: the output prefix (WSClean's default)
  std::vector<std::string> ms;   ///< the MeasurementSets, in order
  imaging::ImageRunSettings run;
  io::ms::SelectionRequest selection;
  /// -pol's list in WSClean's set order (io::ms::parse_pol_list); selection.pol is the one being
  /// imaged (the first outside the per-polarization passes). More than one: the outputs carry
  /// the polarization in their names (NAME-Q-image.fits), the PSF the first's, unnamed.
  std::vector<io::ms::PolRequest> pols = {io::ms::PolRequest::kI};
  PrimaryBeamOptions primary_beam;
  bool help = false, version = false;
  bool dry_run = false;  ///< -dry-run: every check, then exit 0 without reading visibilities
  /// -predict: NAME[-000c]-model.fits → the model column; -size and -scale may then come from the
  /// model (zero here), and -niter and -make-psf are ignored, as WSClean ignores them.
  bool predict = false;
  long long niter = 0;  ///< -niter (the same as deconvolution.niter)
  DeconvolutionOptions deconvolution;
  RestoringBeamOptions beam;
  ResourceOptions resources;
  Verbosity verbosity = Verbosity::kNormal;  ///< -quiet, -verbose
  bool log_time = false;                     ///< -log-time: each line starts with the date and time
  bool no_mf_weighting = false;              ///< -no-mf-weighting (undoes -join-channels' MF weighting)
  bool no_dirty = false;                     ///< -no-dirty: NAME-dirty.fits is not written
  bool make_psf_only = false;                ///< -make-psf-only: only NAME-psf.fits
  std::size_t intervals_out = 1;             ///< -intervals-out: NAME-t000i-... per interval
  /// -gridder and its relatives as given (empty: none), and -wgridder-accuracy (or
  /// -wtowers-accuracy): finish_image_options turns them into run.epsilon and one note.
  std::string gridder;
  std::optional<double> gridder_accuracy;
  /// -device (gpuclean's own): where to grid; resolved by clean::resolve_device into run.device.
  clean::Device device = clean::Device::kAuto;
  /// -max-gpus N (gpuclean's own): grid and clean on at most N of the visible GPUs (0: all); the
  /// output channels spread over them (image_gpus.hpp).
  std::size_t max_gpus = 0;
  /// -json FILE (- for stdout): the run's JSON summary (docs/summary-json.md); -niter > 0 only.
  std::string json;
  /// What gpuclean did with options whose meaning it reaches its own way (-gridder, -nwlayers,
  /// -parallel-reordering ...): one line each, said once when the run starts.
  std::vector<std::string> notes;
};

}  // namespace gpuclean::app

#pragma once
// What `gpuclean image` writes, named and headed as WSClean 3.1 does (imaging-plan.md §5):
// NAME-{dirty,image,psf}.fits, or NAME-000c-… per channel and NAME-MFS-… with -channels-out > 1;
// SIN projection on the phase centre, the band's FREQ axis, the fitted PSF's beam, WSC* keywords.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/image/image_args.hpp"
#include "imaging/image_run.hpp"
#include "io/fits_writer.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/staged_outputs.hpp"

namespace gpuclean::app {

/// Every file the run will write: the images in the order written (the MFS files last), then
/// NAME-sources.txt (-save-source-list with -niter > 0) and the -json file.
std::vector<std::string> image_output_paths(const ImageOptions& options);

/// NAME-sources.txt.
std::string source_list_path(const ImageOptions& options);

/// Before any work: refuses (FitsError kExists → exit 2) an output that names an input, and
/// (FitsError kOutput → exit 4) an output folder that is missing, is a file, or cannot take a
/// file (folder_write_problem). Existing outputs are replaced, as WSClean does.
void check_image_outputs(const ImageOptions& options);

/// Why `folder` cannot take the run's files, or "" when it can: it does not exist, is not a
/// folder, or creating (and removing) a uniquely named hidden file in it fails. The file is
/// really made: as root access() says yes where a write fails (a read-only mount, /proc, /sys).
std::string folder_write_problem(const std::string& folder);

/// What the header needs beyond the images: the first MS's metadata and the selection used.
struct ImageContext {
  const io::ms::MsMetadata* metadata = nullptr;
  const io::ms::MsSelection* selection = nullptr;
  std::string command_line;
};

/// What deconvolution (-niter > 0) adds to an output channel: its final residual, model
/// (Jy/pixel) and restored image (model ⊛ the fitted beam + residual).
struct CleanImages {
  std::vector<double> residual, model, image;
  std::vector<double> first_residual;  ///< -save-first-residual: after the first round's CLEAN
  /// WSCMAJOR (major iterations, as WSClean counts them: the rounds) and WSCMINOR (components)
  /// of the group that cleaned the channel, on its residual, model and image. The MFS: channel
  /// 0's, as WSClean 3.1 copies channel 0's header (its MFS image has no WSC* card at all).
  std::size_t major_iterations = 0, minor_iterations = 0;
  /// The beam the image was restored with (channel_beam), written on the channel's files as it
  /// is, not fitted a second time.
  std::optional<io::BeamKeywords> beam;
};

/// What -niter > 0 adds to the outputs.
struct CleanOutputs {
  std::vector<CleanImages> images;  ///< one per output channel, then the MFS's
  /// Called once every FITS file is complete (staged) and before any is renamed into place: it
  /// stages the run's other files and writes MODEL_DATA; if it throws, nothing is committed.
  std::function<void(io::StagedOutputs&)> before_commit;
};

/// Fits the beams and writes every output, all or nothing (io::StagedOutputs). With -niter > 0
/// (`clean` given) the files are NAME-{dirty,residual,model,image,psf}.fits (the PSF always, as
/// WSClean). The deconvolution cards (WSCNITER, WSCGAIN, WSCMGAIN, WSCTHRES: the -threshold
/// given, WSCNEGCM) come from the options, as WSClean 3.1 writes them.
/// With `staged`, the files are staged there and the caller commits (a run of several
/// polarizations commits them all at once; `clean->before_commit` is then not called).
void write_image_outputs(const ImageOptions& options, const imaging::ImageRunResult& result,
                         const ImageContext& context, const CleanOutputs* clean = nullptr,
                         io::StagedOutputs* staged = nullptr);

}  // namespace gpuclean::app

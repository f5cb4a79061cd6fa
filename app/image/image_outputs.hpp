#pragma once
// What `gpuclean image` writes, named and headed as WSClean 3.1 does (imaging-plan.md §5):
// NAME-{dirty,image,psf}.fits, or NAME-000c-… per channel and NAME-MFS-… with -channels-out > 1;
// SIN projection on the phase centre, the band's FREQ axis, the fitted PSF's beam, WSC* keywords.
#include <string>
#include <vector>

#include "app/image/image_args.hpp"
#include "imaging/image_run.hpp"
#include "io/ms/ms_metadata.hpp"

namespace gpuclean::app {

/// Every file the run will write, in the order written (the MFS files last).
std::vector<std::string> image_output_paths(const ImageOptions& options);

/// Before any work: refuses (FitsError kExists → exit 2) an output that names an input, and a
/// missing output folder. Existing outputs are replaced, as WSClean does.
void check_image_outputs(const ImageOptions& options);

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
};

/// Fits the beams and writes every output, all or nothing (io::StagedOutputs). With -niter > 0,
/// `clean` holds one CleanImages per output channel, then the MFS's: the files are then
/// NAME-{dirty,residual,model,image,psf}.fits (the PSF always, as WSClean).
void write_image_outputs(const ImageOptions& options, const imaging::ImageRunResult& result,
                         const ImageContext& context, const std::vector<CleanImages>* clean = nullptr);

}  // namespace gpuclean::app

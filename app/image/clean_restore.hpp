#pragma once
// The restored images of `gpuclean image -niter N`, as WSClean 3.1 restores them: each output
// channel's image = its model ⊛ its beam (channel_beam: fitted to its PSF, or -beam-size /
// -beam-shape) + its residual; with several channels the MFS residual and model are the
// channels' WSCIMGWG-weighted means (W31:math/imageoperations.cpp MakeMFSImage) and the MFS image
// restores them with the MFS PSF's beam. The channels are restored at once, the threads split
// between them: a channel's restore is an FFT convolution that does not use all of a large host.
#include <cstddef>
#include <vector>

#include "app/image/clean_summary.hpp"
#include "app/image/image_args.hpp"
#include "app/image/image_outputs.hpp"
#include "imaging/image_run.hpp"

namespace gpuclean::app {

/// `result.channels[c]` hold each output channel's dirty image and PSF, `outputs.images[c]` its
/// residual and model, `run_of_channel[c]` the index of the group that cleaned it. Fills every
/// image; with several channels appends the MFS's CleanImages (channel 0's counts, as WSClean's
/// MFS header is channel 0's) and sets result.mfs (`selected_channels`: the MS channels it
/// spans). Returns the summary's planes, in channel order.
std::vector<ImagePlaneSummary> restore_clean_images(const ImageOptions& options, imaging::ImageRunResult& result,
                                                    CleanOutputs& outputs, const std::vector<std::size_t>& run_of_channel,
                                                    std::size_t selected_channels);

}  // namespace gpuclean::app

#pragma once
// `gpuclean image -niter N` (N > 0): the VisStore of the selection, then for each group of output
// channels cleaned together (clean_groups.hpp: all of them with -join-channels, else each on its
// own, as WSClean 3.1) an OuterLoopSession built from its dirty images and PSFs, in WSClean's
// theoretical beam, and WSClean 3.1's major cycles (run_major_cycles); then
// NAME[-000c|-MFS]-{dirty,residual,model,image,psf}.fits, all or nothing, NAME-sources.txt
// (-save-source-list: the last group's, as WSClean leaves it), MODEL_DATA (-mgain < 1: every
// channel's final model) and the -json summary (a run per group).
#include <string>
#include <vector>

#include "app/image/image_args.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::app {

/// `run` as run_image resolved it. Prints one line per major cycle (prefixed "channel c: " when
/// the channels are cleaned one by one).
void run_clean(const ImageOptions& run, const std::vector<io::ms::MsMetadata>& metadata,
               const std::vector<io::ms::MsSelection>& selections, const std::string& command_line);

}  // namespace gpuclean::app

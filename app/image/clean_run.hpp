#pragma once
// `gpuclean image -niter N` (N > 0) on the CPU: the host VisStore of the selection, the
// OuterLoopSession built from its dirty images and PSFs, WSClean 3.1's major cycles
// (run_major_cycles), then NAME[-000c|-MFS]-{dirty,residual,model,image,psf}.fits, all or nothing.
// Then NAME-sources.txt (-save-source-list), MODEL_DATA (-mgain < 1) and the -json summary.
#include <string>
#include <vector>

#include "app/image/image_args.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::app {

/// `run` as run_image resolved it (run.run.device is the CPU). Prints one line per major cycle.
void run_clean(const ImageOptions& run, const std::vector<io::ms::MsMetadata>& metadata,
               const std::vector<io::ms::MsSelection>& selections, const std::string& command_line);

}  // namespace gpuclean::app

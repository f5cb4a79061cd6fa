#pragma once
// The single command as a function call, for the Python package: the same stages, checks and
// outputs, with the results handed back instead of only written. No CLI11, CFITSIO or JSON
// library types cross this header, so that the binding compiles with our headers alone.

#include <optional>
#include <string>

#include "app/run_options.hpp"
#include "clean/deconvolver.hpp"
#include "clean/host_image.hpp"
#include "io/fits_image.hpp"

namespace gpuclean::app {

struct EmbeddedRun {
  clean::CleanResult result;
  std::string summary_json;  ///< the --json summary, as the command line writes it
};

/// Reads options.dirty and options.psf (and options.fits_mask) as the command line does.
EmbeddedRun run_embedded(const RunOptions& options);

/// Starts from images in memory; options.dirty and options.psf only name them in the summary.
/// `mask` (non-zero: may be cleaned) takes the place of --fits-mask.
EmbeddedRun run_embedded(const RunOptions& options, io::FitsImage dirty, io::FitsImage psf,
                         std::optional<clean::HostImage> mask);

/// The same with the dirty image in device memory (CUDA builds): `dirty_header` carries its
/// header cards and stored axes (no pixels). A GPU run copies it on the device; its NaN pixels
/// are found there; only a run that ends up on the CPU downloads it.
EmbeddedRun run_embedded(const RunOptions& options, const clean::DeviceImage& dirty, io::FitsImage dirty_header,
                         io::FitsImage psf, std::optional<clean::HostImage> mask);

}  // namespace gpuclean::app

#pragma once
// The provenance every FITS output carries: ORIGIN, the GC* keywords (settings, what the run did,
// why it stopped) and HISTORY (the command line, then a summary line). One function for the
// one-image run and the cube run, so that both files say the same things the same way.

#include <string>
#include <vector>

#include "app/run_options.hpp"
#include "clean/deconvolver.hpp"
#include "io/fits_writer.hpp"

namespace gpuclean::app {

/// The write options of a run's FITS outputs (overwrite on: each writer replaces its staging
/// file, and the commit honours --overwrite). `results` are its CLEAN runs (one, or a cube's
/// groups); `join` is the cube's join mode ("channels", "polarizations", "independent"), empty
/// for a one-image run.
io::WriteOptions provenance(const RunOptions& options, const std::vector<const clean::CleanResult*>& results,
                            const std::string& device, const std::string& join, const std::vector<std::string>& inputs);

/// The FITS keywords that record --multiscale (none without it): GCMSCALE, GCSCALES, ...
std::vector<io::Keyword> multiscale_keywords(const clean::CleanSettings& settings,
                                             const std::vector<clean::ScaleSummary>& scales);

}  // namespace gpuclean::app

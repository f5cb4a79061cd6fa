#pragma once
// What `gpuclean image` holds while it runs, taken after every check and before the first read:
// the write lock of each MeasurementSet whose MODEL_DATA the run will write (a second such run on
// the same MS is refused at once, exit 6), after finishing or removing what a stopped run left
// for it; and its output folders swept of stopped runs' stage folders (io/stage_folder.hpp).

#include <memory>
#include <vector>

#include "app/image/image_options.hpp"
#include "io/ms/ms_lock.hpp"

namespace gpuclean::app {

/// True when the run writes MODEL_DATA (or -model-column): -predict, or a loop that predicts
/// (-niter > 0, -mgain < 1) without -no-update-model-required, as WSClean 3.1.
bool writes_model_data(const ImageOptions& o);

class ImageRunGuard {
 public:
  explicit ImageRunGuard(const ImageOptions& o);
  ImageRunGuard(const ImageRunGuard&) = delete;
  ImageRunGuard& operator=(const ImageRunGuard&) = delete;

 private:
  std::vector<std::unique_ptr<io::ms::MsWriteLock>> locks_;
};

}  // namespace gpuclean::app

#pragma once
// `gpuclean image -predict`: NAME[-000c]-model.fits → MODEL_DATA of every MS, as `wsclean
// -predict` does (imaging/predict_run.hpp; the model files: predict_models.hpp).
#include "app/image/image_args.hpp"

namespace gpuclean::app {

/// Runs the prediction `options` (parsed with -predict) asks for; returns the exit code. Every
/// model and MS is checked before the first MS is written; failures throw (main's classify()).
int run_predict(const ImageOptions& options);

}  // namespace gpuclean::app

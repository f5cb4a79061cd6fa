#pragma once
// MODEL_DATA at the end of `gpuclean image -niter N`, as WSClean 3.1 leaves it (measured): the
// final model of each output channel predicted into its input channels, every selected row
// (flagged ones too), exactly as `gpuclean image -predict` / `wsclean -predict` of the written
// NAME[-000c]-model.fits (imaging/predict_run.hpp). WSClean writes it only when it predicted
// during the loop (-mgain < 1; with -mgain 1 it writes none) and not with -no-update-model-required.
#include <vector>

#include "app/image/image_args.hpp"
#include "imaging/predict_run.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::app {

/// The degridder for `run.device`: predict_gpu where CUDA is built and the GPU asked for, else
/// predict_cpu.
imaging::PredictBackend predict_backend(const imaging::ImageRunSettings& run);

/// Predicts `models` (one per output channel, row-major, Jy/pixel) into MODEL_DATA of every MS of
/// `selections`. All predictions are made before the first MS is written.
imaging::PredictRunResult write_model_data(const ImageOptions& options,
                                           const std::vector<io::ms::MsSelection>& selections,
                                           const std::vector<std::vector<double>>& models);

}  // namespace gpuclean::app

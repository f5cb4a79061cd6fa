#pragma once
// MODEL_DATA at the end of `gpuclean image -niter N`, as WSClean 3.1 leaves it (measured): the
// final model of each output channel predicted into its input channels, every selected row
// (flagged ones too), exactly as `gpuclean image -predict` / `wsclean -predict` of the written
// NAME[-000c]-model.fits (imaging/predict_run.hpp). WSClean writes it only when it predicted
// during the loop (-mgain < 1; with -mgain 1 it writes none) and not with -no-update-model-required.
#include <future>
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

/// write_model_data in three steps that overlap the rest of a run: the rows' u, v, w are read in
/// the background from construction on (while the major cycles clean: they do not touch the MSs),
/// predict() predicts the final models in the background (while the images are restored and
/// staged), and stage() waits for both and stages MODEL_DATA's journals with the run's outputs,
/// which the outputs' commit applies. A failure of either background step surfaces in write(); destruction
/// waits for them. `options` and `selections` must outlive the object.
class ModelDataUpdate {
 public:
  ModelDataUpdate(const ImageOptions& options, const std::vector<io::ms::MsSelection>& selections);
  ModelDataUpdate(const ModelDataUpdate&) = delete;
  ModelDataUpdate& operator=(const ModelDataUpdate&) = delete;
  /// One model per output channel (row-major, Jy/pixel); call once.
  void predict(std::vector<std::vector<double>> models);
  /// `later`: a polarization after the run's first one with MODEL_DATA; its journals then never
  /// reset the column (the first's, applied before, may have made it).
  imaging::PredictRunResult stage(io::StagedOutputs& staged, const std::string& dir, bool later = false);

 private:
  const ImageOptions& options_;
  const std::vector<io::ms::MsSelection>& selections_;
  std::vector<imaging::ModelRows> rows_;
  imaging::PredictRunResult result_;
  std::future<std::vector<imaging::ModelRows>> read_;
  std::future<void> predicted_;
};

}  // namespace gpuclean::app

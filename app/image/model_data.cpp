#include "app/image/model_data.hpp"

#include <span>

#ifdef GPUCLEAN_HAVE_CUDA
#include "imaging/gpu/gridder_gpu.hpp"
#endif

namespace gpuclean::app {

imaging::PredictBackend predict_backend(const imaging::ImageRunSettings& run) {
#ifdef GPUCLEAN_HAVE_CUDA
  if (run.device == clean::Device::kGpu) {
    imaging::GpuGridderOptions gpu;
    gpu.device = run.gpu;
    gpu.budget_bytes = run.gpu_budget_bytes;
    return [gpu](const imaging::GridPlan& plan, std::span<const double> model, const imaging::Samples& samples, int) {
      return imaging::predict_gpu(plan, model, samples, gpu);
    };
  }
#else
  (void)run;
#endif
  return imaging::predict_cpu;
}

namespace {

imaging::PredictRunSettings predict_settings(const ImageOptions& o) {
  imaging::PredictRunSettings settings;
  settings.image = o.run.image;
  settings.channels_out = o.run.channels_out;
  settings.channel_division_hz = o.run.channel_division_hz;
  settings.epsilon = o.run.epsilon;
  settings.threads = o.run.threads;
  settings.backend = predict_backend(o.run);
  return settings;
}

}  // namespace

imaging::PredictRunResult write_model_data(const ImageOptions& o,
                                           const std::vector<io::ms::MsSelection>& selections,
                                           const std::vector<std::vector<double>>& models) {
  return imaging::predict_run(selections, predict_settings(o),
                              [&](std::size_t channel) { return models.at(channel); });
}

ModelDataUpdate::ModelDataUpdate(const ImageOptions& options, const std::vector<io::ms::MsSelection>& selections)
    : options_(options), selections_(selections) {
  read_ = std::async(std::launch::async, [this] { return imaging::read_model_rows(selections_); });
}

void ModelDataUpdate::predict(std::vector<std::vector<double>> models) {
  predicted_ = std::async(std::launch::async, [this, models = std::move(models)] {
    rows_ = read_.get();
    result_ = imaging::predict_model_rows(rows_, selections_, predict_settings(options_),
                                          [&](std::size_t channel) { return models.at(channel); });
  });
}

imaging::PredictRunResult ModelDataUpdate::stage(io::StagedOutputs& staged, const std::string& dir, bool later) {
  predicted_.get();
  imaging::stage_model_rows(rows_, selections_, result_, staged, dir, later);
  return result_;
}

}  // namespace gpuclean::app

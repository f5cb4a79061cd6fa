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

imaging::PredictRunResult write_model_data(const ImageOptions& o,
                                           const std::vector<io::ms::MsSelection>& selections,
                                           const std::vector<std::vector<double>>& models) {
  imaging::PredictRunSettings settings;
  settings.image = o.run.image;
  settings.channels_out = o.run.channels_out;
  settings.epsilon = o.run.epsilon;
  settings.threads = o.run.threads;
  settings.backend = predict_backend(o.run);
  return imaging::predict_run(selections, settings, [&](std::size_t channel) { return models.at(channel); });
}

}  // namespace gpuclean::app

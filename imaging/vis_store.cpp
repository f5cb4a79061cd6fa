#include "imaging/vis_store.hpp"

#include <string>

#include "clean/errors.hpp"
#include "imaging/gridder_cpu.hpp"

namespace gpuclean::imaging {

void VisStore::add_channel(ChannelSamples samples, double sum_cw) {
  if (samples.cw.empty())
    throw clean::InvalidInput("output channel " + std::to_string(channels_.size()) +
                              ": no visibility inside the uv grid has a nonzero weight");
  // predict_cpu's contract: the plan covers every sample's |w|, so unit weights (the same range
  // image_run's cw-weighted plan has, since every stored cw is nonzero).
  const std::vector<float> ones(samples.w.size(), 1.0f);
  GridPlan plan = choose_grid_plan(settings_.image, settings_.epsilon, w_range(samples.w, ones), samples.w.size());
  std::vector<std::complex<float>> model(samples.w.size());
  Channel ch{std::move(samples), std::move(plan), std::move(model), sum_cw, 1.0};
  channels_.push_back(std::move(ch));
  if (backend_) backend_->add_channel(channels_.size() - 1, channels_.back().plan, channels_.back().samples);
}

std::vector<double> VisStore::invert(std::size_t c, VisValues values) const {
  const Channel& ch = channels_.at(c);
  const ChannelSamples& s = ch.samples;
  std::vector<double> image;
  if (backend_) {
    image = backend_->invert(c, ch.plan, s, ch.model, values);
  } else if (values == VisValues::kResidual) {
    // Float, as WSClean subtracts its float model buffer (the GPU fuses it into its records).
    std::vector<std::complex<float>> residual(ch.model.size());
    for (std::size_t k = 0; k < residual.size(); ++k) residual[k] = s.vis[k] - ch.model[k];
    image = invert_cpu(ch.plan, Samples{s.u, s.v, s.w, residual, s.cw}, settings_.threads);
  } else {
    image = invert_cpu(ch.plan, Samples{s.u, s.v, s.w, values == VisValues::kPsf ? s.one : s.vis, s.cw},
                       settings_.threads);
  }
  // Two divisions, in image_run's order, so the first inversion matches it to the last bit.
  for (double& x : image) x /= ch.sum_cw;
  if (ch.psf_centre != 1)
    for (double& x : image) x /= ch.psf_centre;
  return image;
}

std::vector<double> VisStore::invert_psf(std::size_t c) {
  Channel& ch = channels_.at(c);
  ch.psf_centre = 1;
  std::vector<double> psf = invert(c, VisValues::kPsf);
  const std::size_t W = settings_.image.width, H = settings_.image.height;
  ch.psf_centre = psf[(H / 2) * W + W / 2];
  for (double& x : psf) x /= ch.psf_centre;
  return psf;
}

std::vector<double> VisStore::invert_dirty(std::size_t c) const {
  return invert(c, VisValues::kData);
}

std::vector<double> VisStore::invert_residual(std::size_t c) const {
  return invert(c, VisValues::kResidual);
}

void VisStore::predict(std::size_t c, std::span<const double> model) {
  Channel& ch = channels_.at(c);
  const ImageGeometry& g = settings_.image;
  if (model.size() != g.width * g.height)
    throw clean::InvalidInput("the model of output channel " + std::to_string(c) + " does not have " +
                              std::to_string(g.width) + "x" + std::to_string(g.height) + " pixels");
  const ChannelSamples& s = ch.samples;
  if (backend_) {
    backend_->predict(c, ch.plan, s, model, ch.model);
    return;
  }
  const std::vector<std::complex<double>> vis =
      predict_cpu(ch.plan, model, Samples{s.u, s.v, s.w, {}, {}}, settings_.threads);
  for (std::size_t k = 0; k < vis.size(); ++k) ch.model[k] = std::complex<float>(vis[k]);
}

}  // namespace gpuclean::imaging

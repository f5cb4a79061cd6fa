#include "app/image/vis_store_imager.hpp"

#include <string>

#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

clean::HostImage to_host(const std::vector<double>& pixels, const imaging::GridPlan& plan) {
  clean::HostImage image(plan.image.width, plan.image.height);
  for (std::size_t i = 0; i < pixels.size(); ++i) image.pixels[i] = static_cast<float>(pixels[i]);
  return image;
}

}  // namespace

void VisStoreImager::first_inversion() {
  if (inverted_) return;
  for (std::size_t c = 0; c < store_.channels(); ++c) {
    psfs_.push_back(to_host(store_.invert_psf(c), store_.plan(c)));  // first: its centre normalises
    dirty_.push_back(to_host(store_.invert_dirty(c), store_.plan(c)));
  }
  inverted_ = true;
}

std::vector<clean::HostImage> VisStoreImager::dirty() {
  first_inversion();
  return dirty_;
}

std::vector<clean::HostImage> VisStoreImager::psfs() {
  first_inversion();
  return psfs_;
}

void VisStoreImager::predict(const std::vector<clean::HostImage>& models) {
  if (models.size() != store_.channels())
    throw clean::InvalidInput(std::to_string(models.size()) + " models for " + std::to_string(store_.channels()) +
                              " output channels");
  for (std::size_t c = 0; c < models.size(); ++c) {
    const std::vector<double> model(models[c].pixels.begin(), models[c].pixels.end());
    store_.predict(c, model);  // checks the size
  }
}

std::vector<clean::HostImage> VisStoreImager::invert_residual() {
  first_inversion();  // the residuals need the PSF centres
  std::vector<clean::HostImage> out;
  for (std::size_t c = 0; c < store_.channels(); ++c) out.push_back(to_host(store_.invert_residual(c), store_.plan(c)));
  return out;
}

}  // namespace gpuclean::app

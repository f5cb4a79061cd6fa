#include "app/image/vis_store_imager.hpp"

#include <string>
#include <utility>

#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

clean::HostImage to_host(const std::vector<double>& pixels, const imaging::GridPlan& plan) {
  clean::HostImage image(plan.image.width, plan.image.height);
  for (std::size_t i = 0; i < pixels.size(); ++i) image.pixels[i] = static_cast<float>(pixels[i]);
  return image;
}

std::vector<std::size_t> every_channel(const imaging::VisStore& store) {
  std::vector<std::size_t> all(store.channels());
  for (std::size_t c = 0; c < all.size(); ++c) all[c] = c;
  return all;
}

}  // namespace

VisStoreImager::VisStoreImager(imaging::VisStore& store) : store_(store), channels_(every_channel(store)) {}

VisStoreImager::VisStoreImager(imaging::VisStore& store, std::vector<std::size_t> channels)
    : store_(store), channels_(std::move(channels)) {
  if (channels_.empty()) throw clean::InvalidInput("an imager of no output channel");
  for (std::size_t c : channels_)
    if (c >= store_.channels())
      throw clean::InvalidInput("output channel " + std::to_string(c) + " of a store of " +
                                std::to_string(store_.channels()));
}

void VisStoreImager::first_inversion() {
  if (inverted_) return;
  for (std::size_t c : channels_) {
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
  if (models.size() != channels_.size())
    throw clean::InvalidInput(std::to_string(models.size()) + " models for " + std::to_string(channels_.size()) +
                              " output channels");
  for (std::size_t k = 0; k < models.size(); ++k) {
    const std::vector<double> model(models[k].pixels.begin(), models[k].pixels.end());
    store_.predict(channels_[k], model);  // checks the size
  }
}

std::vector<clean::HostImage> VisStoreImager::invert_residual() {
  first_inversion();  // the residuals need the PSF centres
  std::vector<clean::HostImage> out;
  for (std::size_t c : channels_) out.push_back(to_host(store_.invert_residual(c), store_.plan(c)));
  return out;
}

}  // namespace gpuclean::app

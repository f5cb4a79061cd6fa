#include "app/image/vis_store_imager.hpp"

#include <exception>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

clean::HostImage to_host(const std::vector<double>& pixels, const imaging::GridPlan& plan) {
  clean::HostImage image(plan.image.width, plan.image.height);
  for (std::size_t i = 0; i < pixels.size(); ++i) image.pixels[i] = static_cast<float>(pixels[i]);
  return image;
}

// Runs f(k) for each k of `channels`: in order on this thread when the store has one lane, else one
// thread per lane, each over its own channels in order (a lane takes one caller at a time), so
// the GPUs grid at once. The first exception is rethrown after every thread ended.
void for_each_channel(const imaging::VisStore& store, const std::vector<std::size_t>& channels,
                      const std::function<void(std::size_t)>& f) {
  std::map<std::size_t, std::vector<std::size_t>> by_lane;
  if (store.lanes() > 1)
    for (std::size_t k = 0; k < channels.size(); ++k) by_lane[store.lane_of(channels[k])].push_back(k);
  if (by_lane.size() <= 1) {
    for (std::size_t k = 0; k < channels.size(); ++k) f(k);
    return;
  }
  std::vector<std::exception_ptr> errors(by_lane.size());
  std::vector<std::thread> threads;
  std::size_t t = 0;
  for (const auto& [lane, ks] : by_lane) {
    threads.emplace_back([&f, &ks, &error = errors[t]] {
      try {
        for (std::size_t k : ks) f(k);
      } catch (...) {
        error = std::current_exception();
      }
    });
    ++t;
  }
  for (std::thread& th : threads) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
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
  psfs_.assign(channels_.size(), {}), dirty_.assign(channels_.size(), {});
  for_each_channel(store_, channels_, [&](std::size_t k) {
    const std::size_t c = channels_[k];
    psfs_[k] = to_host(store_.invert_psf(c), store_.plan(c));  // first: its centre normalises
    dirty_[k] = to_host(store_.invert_dirty(c), store_.plan(c));
  });
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
  for_each_channel(store_, channels_, [&](std::size_t k) {
    const std::vector<double> model(models[k].pixels.begin(), models[k].pixels.end());
    store_.predict(channels_[k], model);  // checks the size
  });
}

std::vector<clean::HostImage> VisStoreImager::invert_residual() {
  first_inversion();  // the residuals need the PSF centres
  std::vector<clean::HostImage> out(channels_.size());
  for_each_channel(store_, channels_, [&](std::size_t k) {
    out[k] = to_host(store_.invert_residual(channels_[k]), store_.plan(channels_[k]));
  });
  return out;
}

}  // namespace gpuclean::app

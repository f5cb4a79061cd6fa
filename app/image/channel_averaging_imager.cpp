#include "app/image/channel_averaging_imager.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

using clean::HostImage;

/// Each group's weighted mean of `images` (a channel of weight 0 adds nothing, so that its NaN
/// image cannot spoil the group), `empty` where a group's weights add to 0.
std::vector<HostImage> weighted_means(const std::vector<HostImage>& images, const std::vector<double>& weights,
                                      const std::vector<std::size_t>& group, std::size_t planes, float empty) {
  const std::size_t w = images.front().width, h = images.front().height;
  std::vector<std::vector<double>> sums(planes, std::vector<double>(w * h, 0.0));
  std::vector<double> weight_sums(planes, 0.0);
  for (std::size_t i = 0; i < images.size(); ++i) {
    if (weights[i] == 0.0) continue;
    std::vector<double>& s = sums[group[i]];
    for (std::size_t p = 0; p < s.size(); ++p) s[p] += weights[i] * static_cast<double>(images[i].pixels[p]);
    weight_sums[group[i]] += weights[i];
  }
  std::vector<HostImage> out;
  for (std::size_t m = 0; m < planes; ++m) {
    HostImage image(w, h, empty);
    if (weight_sums[m] != 0.0)
      for (std::size_t p = 0; p < image.size(); ++p) image.pixels[p] = static_cast<float>(sums[m][p] / weight_sums[m]);
    out.push_back(std::move(image));
  }
  return out;
}

bool same_pixels(const std::vector<HostImage>& a, const std::vector<HostImage>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].width != b[k].width || a[k].height != b[k].height || a[k].pixels != b[k].pixels) return false;
  return true;
}

}  // namespace

std::vector<std::size_t> deconvolution_channel_of(std::size_t n, std::size_t m) {
  if (m == 0 || m > n) m = n;
  std::vector<std::size_t> group(n);
  for (std::size_t i = 0; i < n; ++i) group[i] = i * m / n;
  return group;
}

ChannelAveragingImager::ChannelAveragingImager(MajorCycleImager& inner, std::vector<double> frequencies_hz,
                                               std::vector<double> weights, std::size_t deconvolution_channels,
                                               clean::SpectralFitSettings fit)
    : inner_(inner), channel_frequencies_(std::move(frequencies_hz)), channel_weights_(std::move(weights)) {
  const std::size_t n = channel_frequencies_.size();
  if (n == 0 || channel_weights_.size() != n)
    throw clean::InvalidInput(std::to_string(n) + " channel frequencies and " +
                              std::to_string(channel_weights_.size()) + " weights for -deconvolution-channels");
  group_ = deconvolution_channel_of(n, deconvolution_channels);
  const std::size_t m = group_.back() + 1;
  // CalculateDeconvolutionFrequencies: the weighted mean band centre, else the plain mean.
  frequencies_.assign(m, 0.0), plane_weights_.assign(m, 0.0);
  std::vector<double> plain(m, 0.0), count(m, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    frequencies_[group_[i]] += channel_frequencies_[i] * channel_weights_[i];
    plane_weights_[group_[i]] += channel_weights_[i];
    plain[group_[i]] += channel_frequencies_[i], count[group_[i]] += 1.0;
  }
  for (std::size_t k = 0; k < m; ++k)
    frequencies_[k] = plane_weights_[k] > 0.0 ? frequencies_[k] / plane_weights_[k] : plain[k] / count[k];
  if (m == n) return;  // WSClean stores the models as they are
  if (fit.terms == 0)
    throw clean::InvalidSettings("-deconvolution-channels " + std::to_string(m) + " of " + std::to_string(n) +
                                 " channels needs -fit-spectral-pol or -fit-spectral-log-pol to interpolate the model.");
  std::vector<double> f, w;
  for (std::size_t k = 0; k < m; ++k)
    if (plane_weights_[k] > 0.0) {
      fitted_planes_.push_back(k);
      f.push_back(frequencies_[k]), w.push_back(plane_weights_[k]);
    }
  // The reference frequency does not change the fitted curve (a polynomial in ν or in log ν
  // is one whatever its origin); the session's rule, the middle of the band, is taken.
  const double reference = f.empty() ? 0.0 : (*std::min_element(f.begin(), f.end()) + *std::max_element(f.begin(), f.end())) / 2;
  fit_.emplace(std::move(f), w, fit.terms, reference, fit.logarithmic);
}

void ChannelAveragingImager::check_planes(const std::vector<HostImage>& images, std::size_t count,
                                          const char* what) const {
  if (images.size() != count)
    throw clean::InvalidInput(std::to_string(images.size()) + " " + what + " for " + std::to_string(count) +
                              (count == planes() ? " deconvolution channels" : " imaging channels"));
  for (const HostImage& image : images) {
    const bool first_size = image.width == images.front().width && image.height == images.front().height;
    const bool known_size = width_ == 0 || (image.width == width_ && image.height == height_);
    if (!first_size || !known_size || image.size() != image.width * image.height)
      throw clean::InvalidInput(std::string(what) + " of " + std::to_string(image.width) + " x " +
                                std::to_string(image.height) + " pixels for images of " + std::to_string(width_) +
                                " x " + std::to_string(height_));
  }
}

std::vector<HostImage> ChannelAveragingImager::dirty() {
  const std::vector<HostImage> channels = inner_.dirty();
  check_planes(channels, this->channels(), "dirty images");
  width_ = channels.front().width, height_ = channels.front().height;
  return average(channels);
}

std::vector<HostImage> ChannelAveragingImager::psfs() {
  const std::vector<HostImage> channels = inner_.psfs();
  check_planes(channels, this->channels(), "PSFs");
  // LoadAndAveragePSFs: as the images, but 0 (not NaN) where the weights add to 0.
  return weighted_means(channels, channel_weights_, group_, planes(), 0.0f);
}

std::vector<HostImage> ChannelAveragingImager::average(const std::vector<HostImage>& channel_images) const {
  check_planes(channel_images, channels(), "images");
  return weighted_means(channel_images, channel_weights_, group_, planes(), std::numeric_limits<float>::quiet_NaN());
}

std::vector<HostImage> ChannelAveragingImager::interpolate(const std::vector<HostImage>& plane_models) const {
  check_planes(plane_models, planes(), "models");
  if (!fit_) return plane_models;  // M == N: the groups are the channels
  const std::size_t size = plane_models.front().size(), terms = fit_->terms();
  std::vector<HostImage> out(channels(), HostImage(plane_models.front().width, plane_models.front().height));
  std::vector<float> values(fitted_planes_.size());
  std::vector<double> coefficients(terms);
  for (std::size_t p = 0; p < size; ++p) {
    bool zero = true;  // most pixels: no fit, zero in every channel (as WSClean skips them)
    for (const HostImage& m : plane_models) zero = zero && m.pixels[p] == 0.0f;
    if (zero) continue;
    for (std::size_t a = 0; a < fitted_planes_.size(); ++a) values[a] = plane_models[fitted_planes_[a]].pixels[p];
    fit_->fit_terms(values.data(), coefficients.data());
    for (std::size_t c = 0; c < out.size(); ++c)
      out[c].pixels[p] = static_cast<float>(fit_->evaluate(coefficients.data(), channel_frequencies_[c]));
  }
  return out;
}

void ChannelAveragingImager::store_models(const std::vector<HostImage>& models) {
  // WSClean's model set before its interpolation: the mean of the stored N models (zero at the
  // start) plus what this round added, i.e. the session's models less those of the last round.
  std::vector<HostImage> planes_now =
      stored_ ? weighted_means(channel_models_, channel_weights_, group_, planes(), 0.0f) : models;
  if (stored_)
    for (std::size_t k = 0; k < planes_now.size(); ++k)
      for (std::size_t p = 0; p < planes_now[k].size(); ++p)
        planes_now[k].pixels[p] = static_cast<float>(static_cast<double>(planes_now[k].pixels[p]) +
                                                     (static_cast<double>(models[k].pixels[p]) -
                                                      static_cast<double>(session_models_[k].pixels[p])));
  channel_models_ = interpolate(planes_now);
  session_models_ = models;
  stored_ = true;
}

void ChannelAveragingImager::predict(const std::vector<HostImage>& models) {
  check_planes(models, planes(), "models");
  store_models(models);
  residuals_current_ = false;
  inner_.predict(channel_models_);
}

std::vector<HostImage> ChannelAveragingImager::invert_residual() {
  channel_residuals_ = inner_.invert_residual();
  residuals_current_ = true;
  return average(channel_residuals_);
}

ChannelAveragingImager::ChannelImages ChannelAveragingImager::channel_outputs(const std::vector<HostImage>& models,
                                                                              const std::vector<HostImage>& residuals) {
  check_planes(models, planes(), "models");
  check_planes(residuals, planes(), "residuals");
  if (!stored_ || !same_pixels(models, session_models_)) {  // a round after the last prediction
    store_models(models);
    residuals_current_ = false;
  }
  ChannelImages out{channel_models_, {}};
  if (residuals_current_) {
    out.residuals = channel_residuals_;
  } else {  // AssignAndStoreResidual: each channel its group's residual
    for (std::size_t c = 0; c < channels(); ++c) out.residuals.push_back(residuals[group_[c]]);
  }
  return out;
}

}  // namespace gpuclean::app

#include "clean/scale_images_cpu.hpp"

#include <cmath>

namespace gpuclean::clean {
namespace {

std::vector<std::uint8_t> inner_mask(const std::vector<std::uint8_t>& mask, std::size_t width, std::size_t height,
                                     std::size_t border) {
  if (border == 0) return mask;
  std::vector<std::uint8_t> out(mask.size(), 0);
  for (std::size_t y = border; y + border < height; ++y)
    for (std::size_t x = border; x + border < width; ++x) out[y * width + x] = mask[y * width + x];
  return out;
}

}  // namespace

ScaleImagesCpu::ScaleImagesCpu(const std::vector<CleanScale>& scales, const std::vector<std::uint8_t>& mask,
                               std::size_t width, std::size_t height, int threads)
    : scales_(scales), base_mask_(mask), width_(width), height_(height), conv_(scales.size()), masks_(scales.size()) {
  bool any = false;
  for (std::size_t s = 0; s < scales.size(); ++s) {
    const HostImage& k = scales[s].kernel;
    if (k.size() > 1) {
      conv_[s] = std::make_unique<FftConvolverCpu>(k, k.width / 2, k.height / 2, width, height, threads);
      any = true;
    }
    masks_[s] = inner_mask(mask, width, height, scales[s].border);
  }
  if (any) finite_.resize(mask.size()), image_.resize(mask.size()), best_image_.resize(mask.size());
}

void ScaleImagesCpu::set_weights(const std::vector<float>* weights) {
  weights_ = weights;
  if (weights_ && image_.empty()) image_.resize(base_mask_.size()), best_image_.resize(base_mask_.size());
}

ScaleImagesCpu::Choice ScaleImagesCpu::choose(const std::vector<float>& residual, bool allow_negative, int threads) {
  if (!finite_.empty()) {
    for (std::size_t i = 0; i < residual.size(); ++i) finite_[i] = std::isnan(residual[i]) ? 0.0f : residual[i];
  }
  auto key = [allow_negative](float v) { return allow_negative ? std::abs(v) : v; };
  Choice best;
  residual_peak_.reset();
  for (std::size_t s = 0; s < scales_.size(); ++s) {
    const std::vector<float>* img = &residual;
    if (conv_[s]) {
      conv_[s]->convolve(finite_.data(), image_.data());
      img = &image_;
    }
    Peak p = find_peak(*img, mask(s), allow_negative, threads);
    if (!conv_[s] && !restricted_) residual_peak_ = p;
    if (p.index < 0) continue;
    const float unweighted = key(p.value);
    if (weights_) {  // --local-rms: the search image is the scale's image x the weights
      const std::vector<float>& w = *weights_;
      for (std::size_t i = 0; i < image_.size(); ++i) image_[i] = (*img)[i] * w[i];
      img = &image_;
      p = find_peak(image_, mask(s), allow_negative, threads);
      if (p.index < 0) continue;
    }
    const float biased = static_cast<float>(key(p.value) * scales_[s].bias);
    if (best.scale < 0 || biased > best.biased) {
      best = {static_cast<std::ptrdiff_t>(s), p, biased, unweighted};
      best_in_buffer_ = img == &image_;
      if (best_in_buffer_) std::swap(image_, best_image_);
    }
  }
  return best;
}

const std::vector<float>& ScaleImagesCpu::image(const Choice&, const std::vector<float>& residual) const {
  return best_in_buffer_ ? best_image_ : residual;
}

const std::vector<std::uint8_t>& ScaleImagesCpu::mask(std::size_t scale) const { return masks_[scale]; }

Peak ScaleImagesCpu::residual_peak(const std::vector<float>& residual, bool allow_negative, int threads) const {
  return residual_peak_ ? *residual_peak_ : find_peak(residual, base_mask_, allow_negative, threads);
}

void ScaleImagesCpu::restrict(const std::vector<std::vector<std::uint8_t>>& masks) {
  restricted_ = true;
  for (std::size_t s = 0; s < scales_.size(); ++s) masks_[s] = inner_mask(masks[s], width_, height_, scales_[s].border);
}

}  // namespace gpuclean::clean

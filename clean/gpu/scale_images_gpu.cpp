#include "clean/gpu/scale_images_gpu.hpp"

#include <algorithm>
#include <cmath>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/local_rms_gpu.hpp"
#include "clean/scale_kernels.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::clean::gpu {

namespace {

// The widest kernel's side: every scale's kernel is placed on a grid that wide, so that all the
// scale convolutions share one FFT layout (one plan, one size of buffers).
std::size_t widest(const std::vector<CleanScale>& scales) {
  std::size_t w = 1;
  for (const CleanScale& sc : scales) w = std::max(w, sc.kernel.width);
  return w;
}

}  // namespace

ScaleImagesGpu::ScaleImagesGpu(GpuResources& resources, GpuImageState& state, const std::vector<CleanScale>& scales)
    : state_(state), scales_(scales), conv_(scales.size()) {
  const cudaStream_t s = state.stream();
  const std::size_t n = state.size();
  const std::size_t side = widest(scales);
  for (std::size_t i = 0; i < scales.size(); ++i) {
    if (scales[i].kernel.size() == 1) continue;
    const HostImage k = embed_centred(scales[i].kernel, side);
    cuda::DeviceBuffer<float> d_kernel(k.size(), s);  // freed in stream order after its transform
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_kernel.data(), k.pixels.data(), k.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, s));
    conv_[i] = std::make_unique<FftConvolverGpu>(resources.plans(), s, d_kernel.data(), k.width, k.height,
                                                 k.width / 2, k.height / 2, state.width(), state.height());
    if (finite_.size() == 0) finite_ = cuda::DeviceBuffer<float>(n, s);
    if (image_.size() == 0) image_ = cuda::DeviceBuffer<float>(n, s), best_image_ = cuda::DeviceBuffer<float>(n, s);
  }
}

void ScaleImagesGpu::restrict(const std::vector<std::vector<std::uint8_t>>& masks) {
  const cudaStream_t s = state_.stream();
  const std::size_t n = state_.size();
  if (image_.size() == 0) image_ = cuda::DeviceBuffer<float>(n, s), best_image_ = cuda::DeviceBuffer<float>(n, s);
  masks_.clear();
  for (const auto& m : masks) {
    masks_.emplace_back(n, s);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(masks_.back().data(), m.data(), n, cudaMemcpyHostToDevice, s));
  }
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));  // the host masks may go
}

void ScaleImagesGpu::set_weights(const float* weights) {
  weights_ = weights;
  const cudaStream_t s = state_.stream();
  const std::size_t n = state_.size();
  if (weights_ && image_.size() == 0) image_ = cuda::DeviceBuffer<float>(n, s), best_image_ = cuda::DeviceBuffer<float>(n, s);
}

ScaleImagesGpu::Choice ScaleImagesGpu::choose() {
  const bool neg = state_.settings().allow_negative;
  const cudaStream_t s = state_.stream();
  if (finite_.size()) zero_nan(s, state_.residual(), finite_.data(), state_.size());
  auto key = [neg](float v) { return neg ? std::abs(v) : v; };
  Choice best;
  residual_peak_.reset();
  for (std::size_t i = 0; i < scales_.size(); ++i) {
    const std::uint8_t* mask = masks_.empty() ? state_.mask() : masks_[i].data();
    Peak p;
    const float* searched = image_.data();  // the image p was found in
    if (conv_[i]) {
      conv_[i]->convolve(finite_.data());
      conv_[i]->mask_to(mask, scales_[i].border, image_.data());
      p = state_.peak_of(image_.data());
    } else if (!masks_.empty()) {
      apply_mask(s, state_.residual(), mask, image_.data(), state_.size());
      p = state_.peak_of(image_.data());
    } else {
      p = state_.peak();
      residual_peak_ = p;
      searched = state_.masked();
    }
    if (p.index < 0) continue;
    const float unweighted = key(p.value);
    if (weights_) {  // --local-rms: the search image is the scale's image x the weights
      weigh(s, searched, weights_, image_.data(), state_.size());
      searched = image_.data();
      p = state_.peak_of(image_.data());
      if (p.index < 0) continue;
    }
    const float biased = static_cast<float>(key(p.value) * scales_[i].bias);
    if (best.scale < 0 || biased > best.biased) {
      best = {static_cast<std::ptrdiff_t>(i), p, biased, unweighted};
      best_is_own_ = searched == image_.data();
      if (best_is_own_) std::swap(image_, best_image_);
    }
  }
  return best;
}

Peak ScaleImagesGpu::residual_peak() { return residual_peak_ ? *residual_peak_ : state_.peak(); }

const float* ScaleImagesGpu::masked(const Choice&) const {
  return best_is_own_ ? best_image_.data() : state_.masked();
}

void ScaleImagesGpu::spread(std::size_t scale, float* delta, float* model) {
  conv_[scale]->convolve(delta);
  conv_[scale]->add_to(model, model);
  conv_[scale]->add_to(nullptr, delta);
}

void ScaleImagesGpu::convolve_into(std::size_t scale, const float* image, float* out) {
  zero_nan(state_.stream(), image, finite_.data(), state_.size());
  conv_[scale]->convolve(finite_.data());
  conv_[scale]->add_to(nullptr, out);
}

std::size_t ScaleImagesGpu::bytes_needed(const std::vector<CleanScale>& scales, std::size_t width, std::size_t height) {
  const std::size_t side = widest(scales);
  std::size_t bytes = 0;
  bool any = false;
  for (const CleanScale& sc : scales) {
    if (sc.kernel.size() == 1) continue;
    any = true;
    bytes += FftConvolverGpu::bytes_needed(side, side, side / 2, side / 2, width, height);
  }
  return bytes + (any ? 3 * width * height * sizeof(float) : 0);
}

}  // namespace gpuclean::clean::gpu

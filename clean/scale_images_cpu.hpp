#pragma once
// Each major cycle's scale images on the CPU (the residual (x) each scale's kernel) and the
// choice among them: the scale whose peak x bias is largest, the first scale on ties. A delta
// scale's image is the residual itself.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "clean/fft_convolver_cpu.hpp"
#include "clean/image_stats.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean {

class ScaleImagesCpu {
 public:
  ScaleImagesCpu(const std::vector<CleanScale>& scales, const std::vector<std::uint8_t>& mask, std::size_t width,
                 std::size_t height, int threads);

  struct Choice {
    std::ptrdiff_t scale = -1;  ///< -1: no scale has a cleanable pixel
    Peak peak;                  ///< in the scale's image
    float biased = 0.0f;        ///< |peak| (or peak without negatives) x the scale's bias
    /// The same key of the scale image's own peak, before --local-rms's weights (Clark's
    /// sidelobe limit bounds errors in the image's own units); |peak| without weights.
    float unweighted = 0.0f;
  };
  /// --local-rms: from the next choose() on, search every scale's image x `weights` (null: no
  /// weights). `weights` must outlive those searches.
  void set_weights(const std::vector<float>* weights);

  /// Makes every scale's image of `residual` (NaN counted as 0) and picks the scale to clean.
  Choice choose(const std::vector<float>& residual, bool allow_negative, int threads);

  /// The chosen scale's image (valid until the next choose()) and its search mask: the
  /// cleanable pixels at least the scale's border from every edge.
  const std::vector<float>& image(const Choice& c, const std::vector<float>& residual) const;
  const std::vector<std::uint8_t>& mask(std::size_t scale) const;

  /// The residual's own peak over the clean mask (what the divergence rule watches with
  /// --multiscale): the delta scale's search of the last choose() when it was that search, else a
  /// search of its own.
  Peak residual_peak(const std::vector<float>& residual, bool allow_negative, int threads) const;
  /// The residual changed outside choose() (an outer loop's re-imaged one): residual_peak() searches.
  void forget_peak() { residual_peak_.reset(); }

  /// From now on scale s searches only where masks[s] is set (--auto-mask's second phase).
  void restrict(const std::vector<std::vector<std::uint8_t>>& masks);

  bool is_delta(std::size_t scale) const { return !conv_[scale]; }
  /// data = data (x) the scale's kernel, in place (not for a delta scale).
  void convolve(std::size_t scale, float* data) { conv_[scale]->convolve(data, data); }

 private:
  const std::vector<CleanScale>& scales_;
  const std::vector<std::uint8_t>& base_mask_;
  std::size_t width_, height_;
  bool restricted_ = false;
  const std::vector<float>* weights_ = nullptr;
  bool best_in_buffer_ = false;  // the chosen search image is best_image_ (not the residual)
  std::optional<Peak> residual_peak_;  // from the last choose(), when a delta scale searched the base mask
  std::vector<std::unique_ptr<FftConvolverCpu>> conv_;
  std::vector<std::vector<std::uint8_t>> masks_;  // per scale: the search mask, its border applied
  std::vector<float> finite_, image_, best_image_;
};

}  // namespace gpuclean::clean

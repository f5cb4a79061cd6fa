#pragma once
// WSClean's -parallel-deconvolution N (W31:deconvolution/paralleldeconvolution.cpp; radler's
// algorithms/parallel_deconvolution.cc): the image is divided into ceil(W/N) x ceil(H/N)
// sub-images along seams of least |residual|, and within each major iteration every sub-image is
// cleaned on its own:
// - each by its own session over its bounding box, with the PSF cut to the box's size and a mask
//   of its own area (and of the user's mask), so that its components stay inside its area and
//   subtract only from its own residual; the areas' residuals are joined after each round and the
//   models added;
// - down to max(the run's thresholds, (1 - mgain) x the brightest sub-image's peak): one floor for
//   every sub-image, as WSClean sets it;
// - each with its own component budget (-niter for every sub-image, as WSClean gives each of its
//   algorithms); the run ends when one of them used it up, or when none wants another round.
// - -auto-threshold's noise from the whole residual's weighted mean, once a round (WSClean's);
//   without -auto-mask it is passed to every sub-image as its floor.
// Unlike WSClean, the seams are found once, on the first residual (WSClean finds them again each
// major iteration), so that each sub-image keeps its session (its PSF spectra, scales, auto-mask
// phase and components) from round to round; and with -auto-mask each sub-image estimates the
// noise of its mask phase and thresholds on its own area.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "clean/outer_loop.hpp"

namespace gpuclean::clean {

/// One sub-image: its bounding box in the image, and which of the box's pixels are its own.
struct SubImage {
  std::size_t x = 0, y = 0, width = 0, height = 0;
  std::vector<std::uint8_t> area;  ///< width x height, row-major: 1 where the pixel is this sub-image's
};

/// WSClean's division of `integrated` (the residual's weighted mean over the planes) for a
/// largest sub-image size of `max_size`: ceil(W/N) columns and ceil(H/N) rows, each boundary a
/// seam of least summed |value| (a path of one pixel per row, or per column, moving at most one
/// pixel sideways a step) within a quarter of a sub-image of its even place. Every pixel belongs
/// to one sub-image; returned row by row, left to right.
std::vector<SubImage> divide_image(const HostImage& integrated, std::size_t max_size);

class ParallelDeconvolution : public RoundEngine {
 public:
  /// `settings` and `input` as OuterLoopSession's; `max_size` WSClean's -parallel-deconvolution.
  ParallelDeconvolution(const CleanSettings& settings, const OuterLoopInput& input,
                        const std::vector<const float*>& first, std::size_t max_size);
  ~ParallelDeconvolution() override;

  std::size_t planes() const override { return planes_; }
  std::size_t sub_images() const override { return subs_.size(); }
  const std::vector<SubImage>& division() const { return division_; }
  void set_residuals(const std::vector<const float*>& planes) override;
  /// The largest of the sub-images' peaks (each over its own area).
  float peak() override;
  /// One major iteration over every sub-image; `budget` is each sub-image's -niter (see above).
  OuterLoopRound clean(double floor, double round_gain, std::size_t budget, const CycleCallback& on_cycle) override;
  std::vector<HostImage> models() override;
  std::vector<HostImage> residuals() override { return residuals_; }
  void finish() override;
  /// The sub-images' ledgers summed (components, the largest peak, threshold and noise); after
  /// finish(), their components in the whole image's pixels, sub-image by sub-image.
  const CleanResult& result() const override;

 private:
  struct Sub;
  std::vector<float> crop(const float* plane, const SubImage& s) const;

  HostImage integrated() const;  // the residual's weighted mean over the planes

  std::size_t width_, height_, planes_;
  std::vector<double> plane_weights_;  // per plane: its channel's weight
  double auto_threshold_ = 0.0;        // -auto-threshold, given to the sub-images as a floor
  std::vector<SubImage> division_;
  std::vector<std::unique_ptr<Sub>> subs_;
  std::vector<HostImage> residuals_;  // the image's residual, each area from its sub-image
  mutable CleanResult merged_;
};

}  // namespace gpuclean::clean

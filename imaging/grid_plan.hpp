#pragma once
// Grid size and w-planes of the improved w-stacking gridder (imaging-plan.md §4.1 steps 2–4, §4.3).

#include <cstddef>
#include <span>

#include "imaging/es_kernel.hpp"

namespace gpuclean::imaging {

/// The output image: width × height pixels of `scale` radians, stored row-major [y][x].
struct ImageGeometry {
  std::size_t width = 0, height = 0;
  double scale = 0;
};

/// WSClean's orientation (plan §4.3): x = W/2 − l/δ, y = H/2 + m/δ; every pixel maps through here.
inline double pixel_l(const ImageGeometry& g, std::size_t x) {
  return -(static_cast<double>(x) - static_cast<double>(g.width / 2)) * g.scale;
}
inline double pixel_m(const ImageGeometry& g, std::size_t y) {
  return (static_cast<double>(y) - static_cast<double>(g.height / 2)) * g.scale;
}
/// n − 1 = √(1 − l² − m²) − 1, written without the cancellation near the centre.
double n_minus_one(double l, double m);

/// Smallest 2^a 3^b 5^c 7^d ≥ n.
std::size_t good_fft_size(std::size_t n);

struct GridPlan {
  ImageGeometry image;
  EsKernel kernel;
  std::size_t nu = 0, nv = 0;  ///< grid cells along u (x) and v (y)
  bool wstacking = true;       ///< false: w is ignored (a 2-D imager), one plane
  double nshift = 0;           ///< t = n − 1 + nshift is symmetric over the image
  double t_max = 0;            ///< max |t| over the image
  double w0 = 0, dw = 1;       ///< plane p sits at w = w0 + p·dw (wavelengths, w ≥ 0 after the flip)
  std::size_t planes = 1;
};

/// |w| range (wavelengths) over the samples with nonzero weight; {0, 0} when there are none.
struct WRange {
  double min = 0, max = 0;
};
WRange w_range(std::span<const double> w, std::span<const float> weight);

/// The plan for an image, a kernel and the samples' |w| range. nu = 2·good(⌈σ W_img / 2⌉) (at
/// least 16 and 2W); dw = 1/(2σ t_max); planes = ⌊(w_max − w_min)/dw + W⌋, centred on the range.
/// Throws std::invalid_argument for an empty image or one that reaches past the horizon.
GridPlan make_grid_plan(const ImageGeometry& image, const EsKernel& kernel, WRange w, bool wstacking = true);

/// The cheapest plan among ducc's candidate kernels for a total error `epsilon`, by a cost model
/// of FFT work (planes · nu·nv·log2(nu·nv)) against gridding work (samples · W³, W² without w).
GridPlan choose_grid_plan(const ImageGeometry& image, double epsilon, WRange w, std::size_t samples,
                          bool wstacking = true);

}  // namespace gpuclean::imaging

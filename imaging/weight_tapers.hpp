#pragma once
// The tapers WSClean applies to a finished weight grid (W31:io/imageweightcache.h
// initializeWeightTapers, in that order): the rank filter, then the Gaussian taper.

#include <cstddef>

#include "imaging/weight_grid.hpp"

namespace gpuclean::imaging {

/// WSClean's RankFilter: every nonzero cell above level × the mean of the nonzero cells of its
/// window is set to level × that mean. The window is x ∈ [x − d, x + d) × y ∈ [y − d, y + d), d =
/// window/2, clipped to the grid (asymmetric, as W31's windowMean), read from the unfiltered grid.
/// Means come from 2-D prefix sums: O(cells) instead of window² reads per cell. A window's sum
/// is a difference of prefix sums, exact to about 1e-16 × (grid total / window sum), far below
/// the float in which imaging weights are used.
void rank_filter(WeightGrid& grid, double level, std::size_t window);

/// WSClean's SetGaussianTaper: nonzero cells × exp(−(u² + v²)/(2σ²)) at the cell's own uv
/// coordinates, σ = 2√(2 ln 2)/(2π·fwhm), fwhm in radians.
void gaussian_taper(WeightGrid& grid, double fwhm_rad);

}  // namespace gpuclean::imaging

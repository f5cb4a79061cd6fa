#pragma once
// The tapers WSClean applies to a finished weight grid (W31:io/imageweightcache.h
// initializeWeightTapers, in that order): the rank filter, the Gaussian taper, the uv range or its
// Tukey transitions, the edge taper (W31:structures/imageweights.cpp). Distances are at the
// cell's own uv coordinates, as WSClean's xyToUV gives them.

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

/// -minuv-l / -maxuv-l: cells nearer than `min` (beyond `max`) wavelengths become 0.
void min_uv_range(WeightGrid& grid, double min_lambda);
void max_uv_range(WeightGrid& grid, double max_lambda);

/// -taper-inner-tukey: cells nearer than `min` become 0, those within `transition` beyond it are
/// multiplied by a Tukey rise 0.5 (1 + cos(π/n (x − n))), x the distance past `min`.
void inner_tukey_taper(WeightGrid& grid, double transition_lambda, double min_lambda);
/// -taper-tukey: the same falling to 0 at `max` (cells beyond it 0).
void tukey_taper(WeightGrid& grid, double transition_lambda, double max_lambda);

/// -taper-edge: cells within `size` wavelengths of the grid's u or v edge become 0.
void edge_taper(WeightGrid& grid, double size_lambda);
/// -taper-edge-tukey: as edge_taper with `edge` (0: none), then a Tukey rise over `transition`
/// inside it, in u and in v.
void edge_tukey_taper(WeightGrid& grid, double transition_lambda, double edge_lambda);

}  // namespace gpuclean::imaging

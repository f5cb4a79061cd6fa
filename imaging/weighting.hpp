#pragma once
// Imaging weights exactly as WSClean computes them (imaging-plan.md §3): the weight grid of each
// output channel (or one grid over all of them: MF weighting), finished as natural, uniform or
// Briggs, filtered and tapered; then each sample's imaging weight and WSClean's counters.

#include <cstddef>
#include <utility>
#include <vector>

#include "imaging/weight_grid.hpp"
#include "io/ms/vis_chunk.hpp"

namespace gpuclean::imaging {

enum class WeightMode { kNatural, kUniform, kBriggs };

struct WeightingSettings {
  WeightMode mode = WeightMode::kUniform;  ///< WSClean's default
  double briggs_robustness = 0;
  /// WSClean 3.1's Briggs rule: empty cells become 1 (and so count in the rank filter's means).
  /// Off: 3.6's rule, empty cells stay 0.
  bool briggs_empty_cells_one = false;
  double rank_filter_level = 3;        ///< -weighting-rank-filter; < 1: no filter
  std::size_t rank_filter_size = 16;   ///< -weighting-rank-filter-size
  double gaussian_taper_fwhm_rad = 0;  ///< -taper-gaussian; 0: none
  /// WSClean's uv range and tapers, all in wavelengths (0: none): -minuv-l and -maxuv-l zero the
  /// cells outside [min, max]; -taper-inner-tukey and -taper-tukey make those edges Tukey
  /// transitions of their size; -taper-edge zeroes a band along the grid's edge, -taper-edge-tukey
  /// a transition inside it.
  double min_uv_lambda = 0, max_uv_lambda = 0;
  double inner_tukey_lambda = 0, tukey_lambda = 0;
  double edge_taper_lambda = 0, edge_tukey_lambda = 0;
};

/// Natural, uniform or Briggs on the summed cells, then the rank filter, the Gaussian taper, the
/// uv range and the Tukey and edge tapers (W31:structures/imageweights.cpp FinishGridding,
/// W31:io/imageweightcache.h initializeWeightTapers, in that order).
void finish_weights(WeightGrid& grid, const WeightingSettings& settings);

/// Adds the samples of channels [channel_begin, channel_end) of `chunk` to `grid`; `freq_hz`
/// holds the chunk's channel frequencies (u, v in metres become wavelengths per channel).
void accumulate(WeightGrid& grid, const io::ms::VisChunk& chunk, const std::vector<double>& freq_hz,
                std::size_t channel_begin, std::size_t channel_end);

/// WSClean's counters of one inversion (W31:gridding/msgridderbase.cpp readAndWeightVisibilities),
/// over samples whose gridded weight cw = visibility weight × imaging weight is nonzero.
struct WeightCounters {
  std::size_t visibilities = 0;    ///< WSCNVIS
  double visibility_weights = 0;   ///< WSCVWSUM: Σ visibility weights
  double gridded_weights = 0;      ///< WSCIMGWG = WSCNORMF: Σ cw
  double max_gridded_weight = 0;   ///< max cw
  double effective_visibilities() const {  ///< WSCENVIS = Σ cw / max cw
    return max_gridded_weight > 0 ? gridded_weights / max_gridded_weight : 0.0;
  }
  void add(const WeightCounters& other);
};

/// The imaging weight of each sample of channels [channel_begin, channel_end) of `chunk`
/// ([row][channel − channel_begin]: the grid's value at the sample's cell, 0 outside), whatever its
/// visibility weight, as WSClean stores it in IMAGING_WEIGHT_SPECTRUM. Adds to `counters`.
std::vector<float> imaging_weights(const WeightGrid& grid, const io::ms::VisChunk& chunk,
                                   const std::vector<double>& freq_hz, std::size_t channel_begin,
                                   std::size_t channel_end, WeightCounters& counters);

/// The channel ranges [begin, end) whose samples make each output channel's grid: one range per
/// output channel, or, with MF weighting, every range gridded into one grid.
struct WeightPlan {
  std::size_t padded_width = 0, padded_height = 0;
  double scale_x = 0, scale_y = 0;  ///< radians per pixel
  WeightingSettings settings;
  std::vector<std::pair<std::size_t, std::size_t>> output_channels;
  bool mf_weighting = false;
};

/// The finished grids of `plan` from the samples of `chunks`: one per output channel, or one
/// (shared by every output channel) with MF weighting.
std::vector<WeightGrid> make_weight_grids(const WeightPlan& plan, const std::vector<io::ms::VisChunk>& chunks,
                                          const std::vector<double>& freq_hz);

}  // namespace gpuclean::imaging

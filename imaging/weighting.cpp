#include "imaging/weighting.hpp"

#include <algorithm>
#include <cmath>

#include "imaging/weight_tapers.hpp"

namespace gpuclean::imaging {

void finish_weights(WeightGrid& grid, const WeightingSettings& settings) {
  std::vector<double>& cells = grid.cells();
  switch (settings.mode) {
    case WeightMode::kNatural:
      for (double& c : cells)
        if (c != 0.0) c = 1.0;
      break;
    case WeightMode::kUniform:
      for (double& c : cells)
        if (c != 0.0) c = 1.0 / c;
      break;
    case WeightMode::kBriggs: {
      double sum_sq = 0;
      for (double c : cells) sum_sq += c * c;
      const double average = sum_sq / grid.total();
      const double numerator_sqrt = 5.0 * std::exp(-M_LN10 * settings.briggs_robustness);
      const double s_sq = numerator_sqrt * numerator_sqrt / average;
      for (double& c : cells)
        if (c != 0.0 || settings.briggs_empty_cells_one) c = 1.0 / (1.0 + c * s_sq);
      break;
    }
  }
  if (settings.rank_filter_level >= 1.0) rank_filter(grid, settings.rank_filter_level, settings.rank_filter_size);
  if (settings.gaussian_taper_fwhm_rad != 0.0) gaussian_taper(grid, settings.gaussian_taper_fwhm_rad);
  if (settings.inner_tukey_lambda != 0.0) inner_tukey_taper(grid, settings.inner_tukey_lambda, settings.min_uv_lambda);
  else if (settings.min_uv_lambda != 0.0) min_uv_range(grid, settings.min_uv_lambda);
  if (settings.tukey_lambda != 0.0) tukey_taper(grid, settings.tukey_lambda, settings.max_uv_lambda);
  else if (settings.max_uv_lambda != 0.0) max_uv_range(grid, settings.max_uv_lambda);
  if (settings.edge_tukey_lambda != 0.0) edge_tukey_taper(grid, settings.edge_tukey_lambda, settings.edge_taper_lambda);
  else if (settings.edge_taper_lambda != 0.0) edge_taper(grid, settings.edge_taper_lambda);
}

void accumulate(WeightGrid& grid, const io::ms::VisChunk& chunk, const std::vector<double>& freq_hz,
                std::size_t channel_begin, std::size_t channel_end) {
  for (std::size_t r = 0; r < chunk.rows; ++r)
    for (std::size_t c = channel_begin; c < channel_end; ++c) {
      const double lambda = wavelength_m(freq_hz[c]);
      grid.add(chunk.u[r] / lambda, chunk.v[r] / lambda, chunk.weight[r * chunk.channels + c]);
    }
}

void WeightCounters::add(const WeightCounters& other) {
  visibilities += other.visibilities;
  visibility_weights += other.visibility_weights;
  gridded_weights += other.gridded_weights;
  max_gridded_weight = std::max(max_gridded_weight, other.max_gridded_weight);
}

std::vector<float> imaging_weights(const WeightGrid& grid, const io::ms::VisChunk& chunk,
                                   const std::vector<double>& freq_hz, std::size_t channel_begin,
                                   std::size_t channel_end, WeightCounters& counters) {
  const std::size_t n = channel_end - channel_begin;
  std::vector<float> out(chunk.rows * n);
  for (std::size_t r = 0; r < chunk.rows; ++r)
    for (std::size_t c = channel_begin; c < channel_end; ++c) {
      const double lambda = wavelength_m(freq_hz[c]);
      // WSClean keeps the imaging weight as float and multiplies in float (msgridderbase.h
      // _scratchImageWeights), so cw is a float product; the sums are double.
      const float imaging = static_cast<float>(grid.lookup(chunk.u[r] / lambda, chunk.v[r] / lambda));
      out[r * n + c - channel_begin] = imaging;
      const float weight = chunk.weight[r * chunk.channels + c];
      const double cw = weight * imaging;
      if (cw == 0.0) continue;
      ++counters.visibilities;
      counters.visibility_weights += weight;
      counters.gridded_weights += cw;
      counters.max_gridded_weight = std::max(counters.max_gridded_weight, cw);
    }
  return out;
}

std::vector<WeightGrid> make_weight_grids(const WeightPlan& plan, const std::vector<io::ms::VisChunk>& chunks,
                                          const std::vector<double>& freq_hz) {
  const auto blank = [&] { return WeightGrid(plan.padded_width, plan.padded_height, plan.scale_x, plan.scale_y); };
  std::vector<WeightGrid> grids;
  if (plan.mf_weighting) {
    grids.push_back(blank());
    for (const auto& [begin, end] : plan.output_channels)
      for (const io::ms::VisChunk& chunk : chunks) accumulate(grids.back(), chunk, freq_hz, begin, end);
  } else {
    for (std::size_t j = 0; j < plan.output_channels.size(); ++j) grids.push_back(blank());
  }
  // Each output channel's grid on its own thread (8 grids of 9830² at 8192² took 5.5 s on one).
  const auto n = static_cast<std::ptrdiff_t>(grids.size());
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t j = 0; j < n; ++j) {
    if (!plan.mf_weighting) {
      const auto& [begin, end] = plan.output_channels[static_cast<std::size_t>(j)];
      for (const io::ms::VisChunk& chunk : chunks) accumulate(grids[static_cast<std::size_t>(j)], chunk, freq_hz, begin, end);
    }
    finish_weights(grids[static_cast<std::size_t>(j)], plan.settings);
  }
  return grids;
}

}  // namespace gpuclean::imaging

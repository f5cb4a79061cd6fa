#pragma once
// One output channel's gridder samples (imaging-plan.md §1 step 5): made by image_run for each
// inversion and once, for every major cycle, by the VisStore (major-cycle-plan.md §1 step 3).
#include <complex>
#include <cstddef>
#include <vector>

#include "imaging/grid_plan.hpp"
#include "imaging/weighting.hpp"
#include "io/ms/vis_chunk.hpp"

namespace gpuclean::imaging {

/// The gridder's samples of channels [begin, end) of every chunk, in wavelengths, with cw =
/// visibility weight × imaging weight as a float product (WSClean's float buffer). Only samples
/// with cw ≠ 0 are kept (WSClean never grids the others).
struct ChannelSamples {
  std::vector<double> u, v, w;
  std::vector<std::complex<float>> vis, one;
  std::vector<float> cw;
  double max_baseline = 0;  ///< |uvw| in λ, over samples inside the image's Nyquist box
};

/// The samples of channels [begin, end) of `chunks` weighted by `grid`; adds to `counters`.
ChannelSamples channel_samples(const std::vector<io::ms::VisChunk>& chunks, const WeightGrid& grid,
                               const std::vector<double>& freq_hz, std::size_t begin, std::size_t end,
                               const ImageGeometry& image, WeightCounters& counters);

}  // namespace gpuclean::imaging

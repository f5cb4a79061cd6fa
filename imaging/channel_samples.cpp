#include "imaging/channel_samples.hpp"

#include <algorithm>
#include <cmath>

namespace gpuclean::imaging {

ChannelSamples channel_samples(const std::vector<io::ms::VisChunk>& chunks, const WeightGrid& grid,
                               const std::vector<double>& freq_hz, std::size_t begin, std::size_t end,
                               const ImageGeometry& image, WeightCounters& counters) {
  ChannelSamples s;
  const double half_w = 0.5 * static_cast<double>(image.width), half_h = 0.5 * static_cast<double>(image.height);
  for (const io::ms::VisChunk& chunk : chunks) {
    const std::vector<float> iw = imaging_weights(grid, chunk, freq_hz, begin, end, counters);
    const std::size_t nch = end - begin;
    for (std::size_t r = 0; r < chunk.rows; ++r)
      for (std::size_t ch = begin; ch < end; ++ch) {
        const float cw = chunk.weight[r * chunk.channels + ch] * iw[r * nch + ch - begin];
        if (cw == 0) continue;  // never gridded (WSClean skips them too)
        const double lambda = wavelength_m(freq_hz[ch]);
        s.u.push_back(chunk.u[r] / lambda);
        s.v.push_back(chunk.v[r] / lambda);
        s.w.push_back(chunk.w[r] / lambda);
        s.vis.push_back(chunk.vis[r * chunk.channels + ch]);
        s.cw.push_back(cw);
        const double x = s.u.back() * image.scale * static_cast<double>(image.width);
        const double y = s.v.back() * image.scale * static_cast<double>(image.height);
        if (std::floor(x) > -half_w && std::ceil(x) < half_w && std::floor(y) > -half_h && std::ceil(y) < half_h)
          s.max_baseline = std::max(s.max_baseline, std::sqrt(chunk.u[r] * chunk.u[r] + chunk.v[r] * chunk.v[r] +
                                                              chunk.w[r] * chunk.w[r]) / lambda);
      }
  }
  s.one.assign(s.cw.size(), {1.0f, 0.0f});
  return s;
}

}  // namespace gpuclean::imaging

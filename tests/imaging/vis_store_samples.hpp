#pragma once
// What the VisStore tests share: random samples as channel_samples keeps them (nonzero weight,
// w of both signs, Gaussian values), a random model of 40 points, and an image's largest
// difference relative to a reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "imaging/channel_samples.hpp"
#include "tests/imaging/direct_ft.hpp"

namespace gpuclean::imaging::test_samples {

/// n random uvw (|w| ≤ w_max, inside the Nyquist box of pixels of `scale` radians), those of
/// nonzero weight kept, each with a random value.
inline ChannelSamples random_channel_samples(std::size_t n, double scale, double w_max, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const direct_ft::Data d = direct_ft::random_uvw(n, scale, w_max, rng);
  ChannelSamples s;
  std::normal_distribution<float> value(0.0f, 1.0f);
  for (std::size_t k = 0; k < n; ++k) {
    if (d.weight[k] == 0) continue;
    s.u.push_back(d.u[k]), s.v.push_back(d.v[k]), s.w.push_back(d.w[k]);
    s.cw.push_back(d.weight[k]);
    s.vis.emplace_back(value(rng), value(rng));
  }
  s.one.assign(s.cw.size(), {1.0f, 0.0f});
  return s;
}

/// A width × height model of 40 points of falling flux at random pixels (several may share one).
inline std::vector<double> random_point_model(std::size_t width, std::size_t height, std::size_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pixel(0, width * height - 1);
  std::vector<double> m(width * height, 0.0);
  for (int i = 0; i < 40; ++i) m[pixel(rng)] += 1.0 / (1 + i);
  return m;
}

/// max |ours − ref| / max |ref|.
inline double max_relative_difference(const std::vector<double>& ours, const std::vector<double>& ref) {
  double peak = 0, err = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    peak = std::max(peak, std::abs(ref[i]));
    err = std::max(err, std::abs(ours[i] - ref[i]));
  }
  return err / peak;
}

}  // namespace gpuclean::imaging::test_samples

#include "app/bench/gridder_observation.hpp"

#include <cmath>
#include <numbers>

#include "data/arrays.hpp"
#include "data/rng.hpp"

namespace gpuclean::app {

SyntheticTrack meerkat_track(std::size_t times, double hours, double dec_deg) {
  // data/arrays.cpp holds the pads m000..m063 (SARAO katconfig, the table of data/msim/layout.py)
  // in the local equatorial frame: X towards the meridian, Y east, Z to the pole. With the local
  // hour angle H that is Thompson, Moran & Swenson eq. 4.1, as layout.py baseline_uvw applies
  // to ITRF with the Greenwich one.
  const data::ArrayLayout a = data::array_layout("meerkat");
  const std::size_t n = a.x.size();
  SyntheticTrack t;
  t.times = times;
  t.baselines = n * (n - 1) / 2;
  const double d = dec_deg * std::numbers::pi / 180.0;
  const double sd = std::sin(d), cd = std::cos(d);
  const double step_s = hours * 3600.0 / static_cast<double>(times);
  const double sidereal_rad_per_s = 2.0 * std::numbers::pi * 1.00273790935 / 86400.0;
  for (std::size_t i = 0; i < times; ++i) {
    const double h = (static_cast<double>(i) - 0.5 * static_cast<double>(times - 1)) * step_s * sidereal_rad_per_s;
    const double sh = std::sin(h), ch = std::cos(h);
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) {
        const double x = a.x[q] - a.x[p], y = a.y[q] - a.y[p], z = a.z[q] - a.z[p];
        t.u.push_back(sh * x + ch * y);
        t.v.push_back(-sd * ch * x + sd * sh * y + cd * z);
        t.w.push_back(cd * ch * x - cd * sh * y + sd * z);
      }
  }
  return t;
}

std::vector<double> channel_frequencies(std::size_t channels, double low_hz, double high_hz) {
  const double width = (high_hz - low_hz) / static_cast<double>(channels);
  std::vector<double> f(channels);
  for (std::size_t c = 0; c < channels; ++c) f[c] = low_hz + (static_cast<double>(c) + 0.5) * width;
  return f;
}

ChannelSamples channel_samples(const SyntheticTrack& track, double freq_hz, double flagged, std::uint64_t seed) {
  constexpr double kSpeedOfLight = 299792458.0;
  const double per_metre = freq_hz / kSpeedOfLight;
  const std::size_t n = track.u.size();
  ChannelSamples s;
  s.u.resize(n), s.v.resize(n), s.w.resize(n);
  s.vis.resize(n), s.weight.resize(n);
  s.ones.assign(n, {1.0f, 0.0f});
  s.unit.assign(n, 1.0f);
  data::Rng rng(seed);
  for (std::size_t k = 0; k < n; ++k) {
    s.u[k] = track.u[k] * per_metre;
    s.v[k] = track.v[k] * per_metre;
    s.w[k] = track.w[k] * per_metre;
    const auto re = static_cast<float>(rng.normal());
    s.vis[k] = {re, static_cast<float>(rng.normal())};
    const bool flag = rng.uniform() < flagged;
    s.weight[k] = flag ? 0.0f : 1.0f;
    s.flagged += flag ? 1 : 0;
  }
  return s;
}

}  // namespace gpuclean::app

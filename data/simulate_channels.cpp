#include "data/simulate_channels.hpp"

#include <cmath>
#include <stdexcept>

namespace gpuclean::data {

void validate(const ChannelSettings& c, const SimulationSettings& s) {
  auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (c.channels < 1 || c.channels > 1024) fail("--channels must be from 1 to 1024.");
  if (!std::isfinite(c.bandwidth_hz) || c.bandwidth_hz < 0.0) fail("--bandwidth must be a finite band >= 0 Hz.");
  if (c.channels > 1 && !(c.bandwidth_hz > 0.0))
    fail("--channels above 1 needs --bandwidth HZ > 0 (the total band, centred on --freq).");
  if (!(c.bandwidth_hz < 2.0 * s.freq_hz))
    fail("--bandwidth must be below 2 x --freq, so that the lowest channel stays above 0 Hz.");
  if (!(std::isfinite(c.spectral_index_min) && std::isfinite(c.spectral_index_max) &&
        c.spectral_index_min <= c.spectral_index_max && c.spectral_index_min >= -10.0 &&
        c.spectral_index_max <= 10.0))
    fail("--spectral-index MIN MAX needs -10 <= MIN <= MAX <= 10 (e.g. -0.7 -0.7).");
}

ChannelSimulation simulate_channels(const SimulationSettings& s, const ChannelSettings& c) {
  validate(s);
  validate(c, s);
  ChannelSimulation out;
  const double width = c.bandwidth_hz / static_cast<double>(c.channels);
  for (std::size_t i = 0; i < c.channels; ++i) {
    // Written so that a single channel (and an odd count's middle one) sits exactly on nu0.
    const double offset = static_cast<double>(i) + 0.5 - 0.5 * static_cast<double>(c.channels);
    out.frequencies_hz.push_back(s.freq_hz + offset * width);
    out.widths_hz.push_back(width);
  }

  // The sky and the pixel scale are simulate()'s, both at nu0.
  const SimulationSettings fixed = with_pixel_scale(s);
  out.sources = random_sky(s);
  const std::vector<SkySource>& sky = out.sources;
  Rng alpha_rng(s.seed ^ 0x7370656374ull);  // a stream of its own: the sky stays simulate()'s
  for (std::size_t k = 0; k < sky.size(); ++k)
    out.spectral_indices.push_back(alpha_rng.uniform(c.spectral_index_min, c.spectral_index_max));

  // Channels one after another: each one's FFTs already use every core.
  for (std::size_t i = 0; i < c.channels; ++i) {
    const double ratio = out.frequencies_hz[i] / s.freq_hz;
    SimulationSettings channel = fixed;
    // uv_tracks() at this frequency: the nu0 samples scaled by nu_c / nu0.
    channel.freq_hz = out.frequencies_hz[i];
    channel.noise = s.noise * std::sqrt(static_cast<double>(c.channels));
    // simulate_sky() seeds only the noise from this; channel 0 keeps the single-channel stream.
    channel.seed = s.seed + static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    std::vector<SkySource> channel_sky = sky;
    for (std::size_t k = 0; k < sky.size(); ++k) channel_sky[k].flux *= std::pow(ratio, out.spectral_indices[k]);
    out.channels.push_back(simulate_sky(channel, channel_sky));
    out.image_weights.push_back(out.channels.back().image_weight);
  }
  return out;
}

MfsImages mfs_images(const ChannelSimulation& sim) {
  MfsImages mfs;
  if (sim.channels.empty()) return mfs;
  const std::size_t n = sim.channels[0].size, pixels = n * n;
  std::vector<double> dirty(pixels, 0.0), psf(pixels, 0.0);
  for (std::size_t i = 0; i < sim.channels.size(); ++i) {
    const double w = sim.image_weights[i];
    mfs.weight += w;
    for (std::size_t p = 0; p < pixels; ++p) {
      dirty[p] += w * sim.channels[i].dirty[p];
      psf[p] += w * sim.channels[i].psf[p];
    }
  }
  const double centre = psf[(n / 2) * n + n / 2];
  mfs.dirty.resize(pixels);
  mfs.psf.resize(pixels);
  for (std::size_t p = 0; p < pixels; ++p) {
    mfs.dirty[p] = static_cast<float>(dirty[p] / mfs.weight);
    mfs.psf[p] = static_cast<float>(psf[p] / centre);
  }
  return mfs;
}

}  // namespace gpuclean::data

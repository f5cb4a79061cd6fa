#include "data/simulate_channels.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "data/fft2d.hpp"
#include "data/parallel_tasks.hpp"

namespace gpuclean::data {
namespace {

std::size_t resolved_threads(std::size_t threads) {
  return threads > 0 ? threads : static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
}

// Channels simulated at once: one per thread, fewer when that many would not fit in 3/4 of the
// host's memory beside the finished channels. A channel in progress holds its FFT workspace
// (two 2N x 2N buffers, 32 N^2 bytes), its grid's weights (16 N^2) and about 8 N^2 of images;
// a finished one keeps its dirty image, PSF and truth (12 N^2).
std::size_t concurrent_channels(std::size_t threads, std::size_t channels, std::size_t size) {
  std::size_t workers = std::min(threads, channels);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return workers;
  const double n2 = static_cast<double>(size) * static_cast<double>(size);
  const double room = 0.75 * static_cast<double>(pages) * static_cast<double>(page) - 12.0 * n2 * static_cast<double>(channels);
  const double fit = std::floor(room / (56.0 * n2));
  return fit < 1.0 ? 1 : std::min(workers, static_cast<std::size_t>(fit));
}

}  // namespace

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
  if (c.threads > 4096) fail("--threads must be from 0 (every core) to 4096.");
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

  // Each channel's settings and sky first, in channel order; the noise of channel i is seeded
  // from its own seed, so no random stream is shared between channels.
  std::vector<SimulationSettings> settings(c.channels, fixed);
  std::vector<std::vector<SkySource>> skies(c.channels, sky);
  for (std::size_t i = 0; i < c.channels; ++i) {
    const double ratio = out.frequencies_hz[i] / s.freq_hz;
    // uv_tracks() at this frequency: the nu0 samples scaled by nu_c / nu0.
    settings[i].freq_hz = out.frequencies_hz[i];
    settings[i].noise = s.noise * std::sqrt(static_cast<double>(c.channels));
    // simulate_sky() seeds only the noise from this; channel 0 keeps the single-channel stream.
    settings[i].seed = s.seed + static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    for (std::size_t k = 0; k < sky.size(); ++k) skies[i][k].flux *= std::pow(ratio, out.spectral_indices[k]);
  }

  // Channels in parallel, one per worker thread; each worker plans its FFTs once and reuses
  // them, with the threads left over when there are fewer channels than threads.
  const std::size_t threads = resolved_threads(c.threads);
  const std::size_t workers = concurrent_channels(threads, c.channels, s.size);
  const int fft_threads = static_cast<int>(std::max<std::size_t>(1, threads / workers));
  std::vector<std::unique_ptr<Fft2d>> workspaces(workers);
  out.channels.resize(c.channels);
  run_tasks(c.channels, workers, [&](std::size_t i, std::size_t worker) {
    if (!workspaces[worker]) workspaces[worker] = std::make_unique<Fft2d>(2 * s.size, fft_threads);
    out.channels[i] = simulate_sky(settings[i], skies[i], workspaces[worker].get());
  });
  for (const auto& channel : out.channels) out.image_weights.push_back(channel.image_weight);
  return out;
}

MfsImages mfs_images(const ChannelSimulation& sim, std::size_t threads) {
  MfsImages mfs;
  if (sim.channels.empty()) return mfs;
  const std::size_t n = sim.channels[0].size, pixels = n * n;
  std::vector<double> dirty(pixels, 0.0), psf(pixels, 0.0);
  for (double w : sim.image_weights) mfs.weight += w;
  // Rows in parallel; each pixel sums its channels in channel order, so the bits do not depend
  // on the threads.
  const auto rows = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(resolved_threads(threads)))
  for (std::ptrdiff_t y = 0; y < rows; ++y) {
    const std::size_t begin = static_cast<std::size_t>(y) * n, end = begin + n;
    for (std::size_t i = 0; i < sim.channels.size(); ++i) {
      const double w = sim.image_weights[i];
      const float* d = sim.channels[i].dirty.data();
      const float* p = sim.channels[i].psf.data();
      for (std::size_t q = begin; q < end; ++q) {
        dirty[q] += w * d[q];
        psf[q] += w * p[q];
      }
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

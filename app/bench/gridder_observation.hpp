#pragma once
// The synthetic observation of `gpuclean bench gridder`: MeerKAT's 64 pads tracking a field
// through transit, as data/simulate_ms.py makes the MeasurementSets of scripts/imaging_bench.py,
// without a MeasurementSet and without a sky (the gridders' speed does not depend on the values).

#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "imaging/gridder_cpu.hpp"

namespace gpuclean::app {

/// Baseline uvw [m] of every row: `times` integrations evenly spread over `hours` centred on the
/// field's transit, each holding the 2,016 baselines ant2 − ant1 (ant1 < ant2) in pad order.
struct SyntheticTrack {
  std::vector<double> u, v, w;
  std::size_t times = 0, baselines = 0;
};
SyntheticTrack meerkat_track(std::size_t times, double hours, double dec_deg);

/// Centres of `channels` equal channels spanning [low_hz, high_hz] (simulate_ms.py channel_freqs).
std::vector<double> channel_frequencies(std::size_t channels, double low_hz, double high_hz);

/// One channel's samples in wavelengths: unit weights except a `flagged` fraction of zeros drawn
/// at random, random complex visibilities, and ones (the PSF's visibilities).
struct ChannelSamples {
  std::vector<double> u, v, w;
  std::vector<std::complex<float>> vis, ones;
  std::vector<float> weight, unit;  ///< unit: every sample weighted 1 (the degridder's plan)
  std::size_t flagged = 0;
  imaging::Samples dirty() const { return {u, v, w, vis, weight}; }
  imaging::Samples psf() const { return {u, v, w, ones, weight}; }
};
ChannelSamples channel_samples(const SyntheticTrack& track, double freq_hz, double flagged, std::uint64_t seed);

}  // namespace gpuclean::app

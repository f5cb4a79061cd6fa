#pragma once
// `gpuclean simulate --channels N`: a wideband observation as WSClean images one, N channels
// across a band centred on SimulationSettings::freq_hz (nu0). A baseline's uv coordinates in
// wavelengths scale with frequency, so each channel has its own PSF (narrower at higher
// frequency); each source has a spectral index alpha, S(nu) = S0 (nu / nu0)^alpha.

#include <cstddef>
#include <string>
#include <vector>

#include "data/simulate.hpp"

namespace gpuclean::data {

struct ChannelSettings {
  std::size_t channels = 1;   ///< --channels N (1: simulate()'s single channel)
  double bandwidth_hz = 0.0;  ///< --bandwidth: the total band; N channels of equal width centred on nu0
  /// --spectral-index MIN MAX: each source's alpha, uniform in [MIN, MAX] (seeded).
  double spectral_index_min = -0.7, spectral_index_max = -0.7;
  /// --threads: the host threads for the channels, their FFTs and their files (0: OpenMP's
  /// default, every core). Channels run in parallel, one per thread; the images do not depend on it.
  std::size_t threads = 0;
};

struct ChannelSimulation {
  std::vector<double> frequencies_hz, widths_hz;  ///< per channel: centre and width, ascending
  /// Per channel: its dirty image, PSF (peak 1) and truth; the same sources at the same
  /// positions with that channel's fluxes; the pixel scale (chosen at nu0) and size shared.
  std::vector<Simulation> channels;
  std::vector<SkySource> sources;        ///< the sky at nu0 (fluxes S0), in the order of channels[c].sources
  std::vector<double> spectral_indices;  ///< per source
  std::vector<double> image_weights;     ///< per channel: its imaging weights' sum (WSCIMGWG), for MFS
};

/// Throws std::invalid_argument, with a sentence that says what to change, when a channel
/// setting is out of range (channels 1 to 1024; 0 < bandwidth < 2 x freq when channels > 1;
/// finite spectral indices with MIN <= MAX).
void validate(const ChannelSettings& channels, const SimulationSettings& settings);

/// Simulates every channel. The sky is simulate()'s (its fluxes are S0 at nu0), so one channel
/// gives simulate()'s images bit for bit. Each channel's noise RMS is settings.noise x
/// sqrt(channels), so the MFS image has about settings.noise.
ChannelSimulation simulate_channels(const SimulationSettings& settings, const ChannelSettings& channels);

/// The multi-frequency synthesis images: the channels weighted by their image weights
/// (sum w_c I_c / sum w_c), the PSF renormalised to peak 1 at its centre.
struct MfsImages {
  std::vector<float> dirty, psf;
  double weight = 0.0;  ///< sum of the channels' image weights
};
/// `threads`: as ChannelSettings::threads (the result does not depend on it).
MfsImages mfs_images(const ChannelSimulation& sim, std::size_t threads = 0);

/// Names of write_channel_simulation's files: NAME-0000-dirty.fits, NAME-0000-psf.fits, ...
/// for every channel, NAME-MFS-dirty.fits, NAME-MFS-psf.fits, truth-0000.fits, ... and
/// sources.csv (the file written last).
std::vector<std::string> channel_output_names(const std::string& name, std::size_t channels);

/// Throws std::invalid_argument for a NAME that is empty or holds a '/', and io::FitsError
/// (kExists) when a file write_channel_simulation would write exists and `overwrite` is off:
/// call it before simulating.
void check_channel_outputs(const std::string& dir, const std::string& name, std::size_t channels, bool overwrite);

/// Writes channel_output_names() into `dir` (created if needed), all or none, WSClean style:
/// each channel's CRVAL3/CDELT3 are its centre and width, WSCIMGWG its image weight and
/// WSCCHANS/WSCCHANE its channel range [c, c + 1); the MFS images have CRVAL3 nu0, CDELT3 the
/// bandwidth, WSCIMGWG the weights' sum and the range [0, N). `command` goes into the HISTORY cards.
void write_channel_simulation(const ChannelSimulation& sim, const SimulationSettings& settings,
                              const ChannelSettings& channels, const std::string& dir, const std::string& name,
                              bool overwrite, const std::string& command);

}  // namespace gpuclean::data

#pragma once
// `gpuclean simulate`: a dirty image, its PSF and the true sky of a simulated observation with a
// real array, written as WSClean-like FITS files.

#include <cstdint>
#include <string>
#include <vector>

#include "data/sky_model.hpp"
#include "data/uv_coverage.hpp"
#include "data/weighting.hpp"
#include "io/fits_header.hpp"

namespace gpuclean::data {

class Fft2d;

struct SimulationSettings {
  std::size_t size = 512;
  std::size_t sources = 60;       ///< point sources
  std::size_t gaussians = 3;
  double gaussian_min_beams = 1.5;  ///< the Gaussians' major FWHM range, in beams (--gaussian-size)
  double gaussian_max_beams = 4.0;
  double gaussian_min_flux = 0.0;  ///< the Gaussians' integrated flux range [Jy] (--gaussian-flux; 0: the power law)
  double gaussian_max_flux = 0.0;
  std::uint64_t seed = 1;
  std::string array = "meerkat";
  double noise = 1e-4;            ///< image-plane RMS [Jy/beam]
  double freq_hz = 1.4e9;
  double dec_deg = 1000.0;        ///< > 90: the array's default declination
  double ra_deg = 53.1166666667;  ///< field centre RA
  double ha_hours = 4.0;          ///< track from -ha to +ha
  double pixels_per_beam = 4.0;   ///< the pixel scale is chosen to give this many across the beam
  double pixel_arcsec = 0.0;      ///< > 0: use this pixel scale instead
  Weighting weighting;            ///< visibility weighting (default Briggs 0, as images are usually made)
};

/// Throws std::invalid_argument, with a sentence that says what to change, when a setting is out
/// of range. simulate() calls it first; front ends may call it earlier.
void validate(const SimulationSettings& settings);

struct Simulation {
  std::size_t size = 0;
  double pixel_deg = 0;
  double dec_deg = 0;
  double beam_fwhm_px = 0;         ///< measured half-power width of the PSF, mean of x and y
  std::string telescope;
  std::vector<float> dirty, psf, truth;  ///< N x N; truth in Jy/pixel
  std::vector<SkySource> sources;
  std::size_t uv_samples = 0, uv_dropped = 0;
  double image_weight = 0;         ///< sum of the gridded samples' imaging weights (WSClean's WSCIMGWG)
};

/// Simulates with a random sky drawn from `settings` (seeded).
Simulation simulate(const SimulationSettings& settings);
/// Simulates a given sky (positions in pixels of a settings.size grid). settings.seed seeds
/// only the noise. `workspace` (data/fft2d.hpp, 2 x settings.size): the FFTs' buffers and plans
/// to reuse, e.g. one per thread; without it they are made here for every core. Same bits either way.
Simulation simulate_sky(const SimulationSettings& settings, const std::vector<SkySource>& sky,
                        Fft2d* workspace = nullptr);

/// The sky simulate() draws from `settings` (seeded): fluxes at settings.freq_hz.
std::vector<SkySource> random_sky(const SimulationSettings& settings);
/// `settings` with pixel_arcsec fixed: as given, or the scale that puts pixels_per_beam pixels
/// across the PSF at settings.freq_hz (what simulate() uses).
SimulationSettings with_pixel_scale(const SimulationSettings& settings);

/// The header of the simulated images: WSClean's 4-D RA---SIN/DEC--SIN/FREQ/STOKES at
/// settings.freq_hz.
io::FitsHeader simulation_header(const Simulation& sim, const SimulationSettings& settings);
/// sources.csv's text, world coordinates from `header`. With `spectral_indices` (one per source)
/// it adds the columns spectral_index and ref_freq_hz.
std::string sources_csv(const Simulation& sim, const io::FitsHeader& header,
                        const std::vector<double>& spectral_indices = {}, double ref_freq_hz = 0.0);

/// Throws io::FitsError (kExists) when a file write_simulation would write exists and
/// `overwrite` is off: call it before simulating.
void check_simulation_outputs(const std::string& dir, bool overwrite);

/// Writes dirty.fits, psf.fits, truth.fits and sources.csv into `dir` (created if needed), all
/// four or none.
/// `command` goes into the HISTORY cards.
void write_simulation(const Simulation& sim, const SimulationSettings& settings, const std::string& dir,
                      bool overwrite, const std::string& command);

}  // namespace gpuclean::data

#include "data/simulate.hpp"

#include <omp.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numbers>
#include <sstream>
#include <stdexcept>

#include "data/arrays.hpp"
#include "data/fft2d.hpp"
#include "data/uv_grid.hpp"
#include "io/fits_writer.hpp"
#include "io/staged_outputs.hpp"
#include "io/text_writer.hpp"
#include "io/wcs.hpp"

namespace gpuclean::data {
namespace {

constexpr double kDeg = std::numbers::pi / 180.0;

// The pixel scale that puts `pixels_per_beam` pixels across the PSF's half-power width. The
// beam does not depend on the image size, so a small grid suffices.
double calibrate_pixel_deg(const std::vector<UvSample>& tracks, double pixels_per_beam, const Weighting& weighting) {
  double sum_u2 = 0.0;
  for (const auto& s : tracks) sum_u2 += 0.5 * (s.u * s.u + s.v * s.v);
  const double sigma_uv = std::sqrt(sum_u2 / static_cast<double>(std::max<std::size_t>(tracks.size(), 1)));
  // Second-moment estimate of the FWHM, then refined on the gridded PSF.
  double pixel_rad = 2.3548 / (2.0 * std::numbers::pi * sigma_uv) / pixels_per_beam;
  for (int iter = 0; iter < 4; ++iter) {
    UvGrid grid(tracks, 256, pixel_rad, weighting);
    double fx = 0.0, fy = 0.0;
    psf_half_power_widths(grid.psf(), 256, &fx, &fy);
    const double fwhm = std::sqrt(fx * fy);
    if (!(fwhm > 0.0)) break;
    pixel_rad *= fwhm / pixels_per_beam;
  }
  return pixel_rad / kDeg;
}

}  // namespace

void validate(const SimulationSettings& s) {
  auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (s.size < 16 || s.size > (std::size_t{1} << 16)) fail("--size must be from 16 to 65536 pixels.");
  if (!(s.noise >= 0.0) || !std::isfinite(s.noise)) fail("--noise must be a finite RMS >= 0 (Jy/beam).");
  if (!(s.freq_hz > 0.0) || !std::isfinite(s.freq_hz)) fail("--freq must be a positive frequency in Hz.");
  if (s.dec_deg <= 90.0 && !(s.dec_deg >= -90.0)) fail("--dec must be from -90 to 90 degrees.");
  if (!(s.ha_hours >= 0.01 && s.ha_hours <= 12.0)) fail("--ha-hours must be from 0.01 to 12.");
  if (!(s.pixel_arcsec >= 0.0) || !std::isfinite(s.pixel_arcsec)) fail("--pixel-scale must be a finite size >= 0 (arcsec).");
  if (s.weighting.mode == WeightingMode::kBriggs && !std::isfinite(s.weighting.robust))
    fail("--weighting briggs R needs a finite R (-2: about uniform, 2: about natural).");
  if (!(s.gaussian_min_beams > 0.0 && s.gaussian_min_beams <= s.gaussian_max_beams) ||
      !std::isfinite(s.gaussian_max_beams))
    fail("--gaussian-size MIN MAX needs 0 < MIN <= MAX (the Gaussians' major FWHM, in beams).");
  const bool no_flux = s.gaussian_min_flux == 0.0 && s.gaussian_max_flux == 0.0;
  if (!no_flux && !(s.gaussian_min_flux > 0.0 && s.gaussian_min_flux <= s.gaussian_max_flux &&
                    std::isfinite(s.gaussian_max_flux)))
    fail("--gaussian-flux MIN MAX needs 0 < MIN <= MAX (the Gaussians' integrated flux, in Jy).");
  array_layout(s.array);  // throws std::invalid_argument naming the arrays
}

io::FitsHeader simulation_header(const Simulation& sim, const SimulationSettings& s) {
  io::FitsHeader h;
  const double centre = static_cast<double>(sim.size / 2 + 1);
  h.set_double("EQUINOX", 2000.0, "J2000");
  h.set_string("BTYPE", "Intensity");
  h.set_string("TELESCOP", sim.telescope);
  h.set_string("OBSERVER", "simulation");
  h.set_string("OBJECT", "SIMFIELD");
  h.set_string("CTYPE1", "RA---SIN", "Right ascension angle cosine");
  h.set_double("CRPIX1", centre);
  h.set_double("CRVAL1", s.ra_deg);
  h.set_double("CDELT1", -sim.pixel_deg);
  h.set_string("CUNIT1", "deg");
  h.set_string("CTYPE2", "DEC--SIN", "Declination angle cosine");
  h.set_double("CRPIX2", centre);
  h.set_double("CRVAL2", sim.dec_deg);
  h.set_double("CDELT2", sim.pixel_deg);
  h.set_string("CUNIT2", "deg");
  h.set_string("CTYPE3", "FREQ", "Central frequency");
  h.set_double("CRPIX3", 1.0);
  h.set_double("CRVAL3", s.freq_hz);
  h.set_double("CDELT3", 0.05 * s.freq_hz);
  h.set_string("CUNIT3", "Hz");
  h.set_string("CTYPE4", "STOKES");
  h.set_double("CRPIX4", 1.0);
  h.set_double("CRVAL4", 1.0);
  h.set_double("CDELT4", 1.0);
  h.set_string("CUNIT4", "");
  h.set_string("SPECSYS", "TOPOCENT");
  h.set_string("DATE-OBS", "2026-01-01T00:00:00.0");
  return h;
}

Simulation simulate_sky(const SimulationSettings& s, const std::vector<SkySource>& sky, Fft2d* workspace) {
  validate(s);
  const ArrayLayout array = array_layout(s.array);
  Simulation sim;
  sim.size = s.size;
  sim.telescope = array.telescope;
  sim.dec_deg = s.dec_deg > 90.0 ? array.default_dec_deg : s.dec_deg;
  TrackSettings track;
  track.dec_deg = sim.dec_deg;
  track.freq_hz = s.freq_hz;
  track.ha_start_hours = -s.ha_hours;
  track.ha_end_hours = s.ha_hours;
  const std::vector<UvSample> tracks = uv_tracks(array, track);
  sim.pixel_deg = s.pixel_arcsec > 0.0 ? s.pixel_arcsec / 3600.0 : calibrate_pixel_deg(tracks, s.pixels_per_beam, s.weighting);

  UvGrid grid(tracks, s.size, sim.pixel_deg * kDeg, s.weighting);
  std::unique_ptr<Fft2d> own;  // one workspace for the three transforms below
  if (!workspace) {
    own = std::make_unique<Fft2d>(grid.fft_size(), omp_get_max_threads());
    workspace = own.get();
  }
  sim.uv_samples = grid.gridded_samples();
  sim.uv_dropped = grid.dropped_samples();
  sim.psf = grid.psf(workspace);
  double fx = 0.0, fy = 0.0;
  psf_half_power_widths(sim.psf, s.size, &fx, &fy);
  sim.beam_fwhm_px = std::sqrt(fx * fy);
  sim.sources = sky;
  sim.truth = render_sky(sky, s.size);
  sim.dirty = grid.dirty(sim.truth, workspace);
  sim.image_weight = grid.weight_sum();
  if (s.noise > 0.0) {
    Rng rng(s.seed ^ 0x6E6F697365ull);  // a stream of its own, so the sky does not shift with it
    const std::vector<float> noise = grid.noise(rng, s.noise, workspace);
    for (std::size_t i = 0; i < sim.dirty.size(); ++i) sim.dirty[i] += noise[i];
  }
  return sim;
}

SimulationSettings with_pixel_scale(const SimulationSettings& s) {
  if (s.pixel_arcsec > 0.0) return s;
  const ArrayLayout array = array_layout(s.array);
  TrackSettings track;
  track.dec_deg = s.dec_deg > 90.0 ? array.default_dec_deg : s.dec_deg;
  track.freq_hz = s.freq_hz;
  track.ha_start_hours = -s.ha_hours;
  track.ha_end_hours = s.ha_hours;
  SimulationSettings fixed = s;
  fixed.pixel_arcsec = calibrate_pixel_deg(uv_tracks(array, track), s.pixels_per_beam, s.weighting) * 3600.0;
  return fixed;
}

std::vector<SkySource> random_sky(const SimulationSettings& s) {
  SkySettings sky;
  sky.size = s.size;
  sky.points = s.sources;
  sky.gaussians = s.gaussians;
  sky.min_flux = s.noise > 0.0 ? 10.0 * s.noise : 1e-3;
  sky.max_flux = 500.0 * sky.min_flux;
  sky.beam_fwhm_px = s.pixels_per_beam;
  sky.gaussian_min_beams = s.gaussian_min_beams;
  sky.gaussian_max_beams = s.gaussian_max_beams;
  sky.gaussian_min_flux = s.gaussian_min_flux;
  sky.gaussian_max_flux = s.gaussian_max_flux;
  Rng rng(s.seed);
  return random_sky(sky, rng);
}

Simulation simulate(const SimulationSettings& s) {
  validate(s);
  return simulate_sky(with_pixel_scale(s), random_sky(s));
}

void check_simulation_outputs(const std::string& dir, bool overwrite) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return;  // write_simulation creates it
  if (!std::filesystem::is_directory(dir, ec))
    throw std::invalid_argument("--out '" + dir + "' is a file; give a folder for the simulated files.");
  io::WriteOptions opt;
  opt.overwrite = overwrite;
  for (const char* name : {"dirty.fits", "psf.fits", "truth.fits", "sources.csv"})
    io::check_output_path((std::filesystem::path(dir) / name).string(), opt);
}

std::string sources_csv(const Simulation& sim, const io::FitsHeader& header,
                        const std::vector<double>& spectral_indices, double ref_freq_hz) {
  if (!spectral_indices.empty() && spectral_indices.size() != sim.sources.size())
    throw std::invalid_argument("sources_csv: one spectral index per source is needed.");
  const bool spectral = !spectral_indices.empty();
  const auto wcs = io::CelestialWcs::from_header(header);
  std::ostringstream csv;
  csv << "id,kind,x,y,ra_deg,dec_deg,flux_jy,fwhm_major_arcsec,fwhm_minor_arcsec,pa_deg"
      << (spectral ? ",spectral_index,ref_freq_hz\n" : "\n");
  csv.precision(10);
  for (std::size_t i = 0; i < sim.sources.size(); ++i) {
    const SkySource& src = sim.sources[i];
    double ra = 0.0, dec = 0.0;
    wcs->pixel_to_world(src.x, src.y, &ra, &dec);
    const bool point = src.kind == SkySource::Kind::kPoint;
    csv << i << ',' << (point ? "point" : "gaussian") << ',' << src.x << ',' << src.y << ',' << ra << ','
        << dec << ',' << src.flux << ',' << src.fwhm_major_px * sim.pixel_deg * 3600.0 << ','
        << src.fwhm_minor_px * sim.pixel_deg * 3600.0 << ',' << src.pa_deg;
    if (spectral) csv << ',' << spectral_indices[i] << ',' << ref_freq_hz;
    csv << '\n';
  }
  return csv.str();
}

void write_simulation(const Simulation& sim, const SimulationSettings& s, const std::string& dir,
                      bool overwrite, const std::string& command) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  io::FitsHeader header = simulation_header(sim, s);
  header.add_history(command.substr(0, 72));
  const std::vector<long> axes = {static_cast<long>(sim.size), static_cast<long>(sim.size), 1, 1};
  io::WriteOptions opt;
  opt.overwrite = overwrite;
  opt.keywords.push_back({"ORIGIN", std::string("gpuclean simulate"), "simulated observation"});
  char info[80];
  std::snprintf(info, sizeof info, "%s, %zu uv samples, %s weighting, seed %llu", sim.telescope.c_str(),
                sim.uv_samples, to_string(s.weighting).c_str(), static_cast<unsigned long long>(s.seed));
  opt.history.push_back(info);
  const auto path = [&](const char* name) { return (fs::path(dir) / name).string(); };
  check_simulation_outputs(dir, overwrite);

  // All four files appear together, or none (see io/staged_outputs.hpp).
  io::StagedOutputs staged(overwrite);
  io::WriteOptions staged_opt = opt;
  staged_opt.overwrite = true;  // each writer replaces its reserved staging file
  io::write_fits_image(staged.stage(path("dirty.fits")), sim.dirty.data(), sim.size, sim.size, header, axes, staged_opt);
  io::write_fits_image(staged.stage(path("psf.fits")), sim.psf.data(), sim.size, sim.size, header, axes, staged_opt);
  io::WriteOptions truth_opt = staged_opt;
  truth_opt.bunit = "JY/PIXEL";
  io::write_fits_image(staged.stage(path("truth.fits")), sim.truth.data(), sim.size, sim.size, header, axes, truth_opt);

  io::write_text_file(staged.stage(path("sources.csv")), sources_csv(sim, header), true);
  staged.commit();
}

}  // namespace gpuclean::data

#include "app/cube/cube_input.hpp"

#include <cmath>
#include <exception>
#include <filesystem>

#include "app/cube/plane_pool.hpp"
#include "app/plane_io.hpp"
#include "clean/errors.hpp"
#include "io/fits_reader.hpp"

namespace gpuclean::app {
namespace {

// A prepared PSF and its warning, logged later in plane order (the planes are prepared in parallel).
struct Prepared {
  clean::PreparedPsf psf;
  std::string warning;
};
Prepared prepare(io::FitsImage psf, std::size_t width, std::size_t height, bool unchecked) {
  Prepared out;
  out.psf = prepare_fits_psf(std::move(psf), width, height, unchecked, &out.warning);
  return out;
}
void warn(const Log& log, const std::string& name, const std::string& warning) {
  if (!warning.empty()) log.warn("%s: %s", name.c_str(), warning.c_str());
}

// A WSClean channel file's frequency: CRVAL of its FREQ axis.
double frequency_of(const io::FitsHeader& h) {
  for (int axis = 3; axis <= 4; ++axis) {
    const std::string n = std::to_string(axis);
    const auto type = h.get_string("CTYPE" + n);
    if (type && type->rfind("FREQ", 0) == 0) return h.get_double("CRVAL" + n).value_or(0.0);
  }
  return 0.0;
}

// One WSClean channel's files, read on a pool thread in the serial loop's order (PSF, then each
// Stokes parameter's dirty image, the PSF prepared after the first); the first failure stops it.
struct ChannelRead {
  bool psf_read = false;
  std::optional<double> psf_weight;  ///< the PSF's WSCIMGWG
  std::vector<std::optional<io::FitsImage>> dirty;
  std::optional<Prepared> prepared;
  std::exception_ptr error;
};

ChannelRead read_channel(const io::WscleanChannelSet& set, std::size_t c, std::size_t stokes, bool unchecked) {
  ChannelRead r;
  r.dirty.resize(stokes);
  try {
    io::FitsImage psf = io::read_fits_image(set.psf[c]);
    r.psf_read = true;
    r.psf_weight = psf.header.get_double("WSCIMGWG");
    for (std::size_t s = 0; s < stokes; ++s) {
      r.dirty[s] = io::read_fits_image(set.dirty[s][c]);
      if (s == 0) r.prepared = prepare(std::move(psf), r.dirty[0]->width, r.dirty[0]->height, unchecked);
    }
  } catch (...) {
    r.error = std::current_exception();
  }
  return r;
}

CubeInput load_wsclean(const RunOptions& o, const Log& log) {
  CubeInput in;
  in.wsclean = true;
  in.set = io::find_wsclean_channels(o.dirty);
  in.channels = in.set.channels;
  in.stokes = std::max<std::size_t>(1, in.set.polarizations.size());
  in.planes.resize(in.channels * in.stokes);
  std::vector<ChannelRead> reads(in.channels);
  for_each_plane(in.channels, plane_threads(in.channels, o.settings.threads), [&](std::size_t c) {
    reads[c] = read_channel(in.set, c, in.stokes, o.psf_unchecked);
  });
  // In channel order, as one thread would have met them: the first failure, warnings, checks.
  bool all_weighted = true;
  for (std::size_t c = 0; c < in.channels; ++c) {
    ChannelRead& r = reads[c];
    if (!r.psf_read) std::rethrow_exception(r.error);
    in.inputs.push_back(in.set.psf[c]);
    const auto psf_weight = r.psf_weight;
    for (std::size_t s = 0; s < in.stokes; ++s) {
      const std::string& path = in.set.dirty[s][c];
      if (!r.dirty[s]) std::rethrow_exception(r.error);
      io::FitsImage dirty = std::move(*r.dirty[s]);
      r.dirty[s].reset();
      in.inputs.push_back(path);
      InputPlane& p = in.plane(c, s);
      p.channel = c;
      p.stokes = s;
      p.pol = in.set.polarizations.empty() ? "" : in.set.polarizations[s];
      p.frequency_hz = frequency_of(dirty.header);
      const auto w = psf_weight ? psf_weight : dirty.header.get_double("WSCIMGWG");
      all_weighted = all_weighted && w && *w > 0.0;
      p.weight = w && *w > 0.0 ? *w : 1.0;
      p.header = dirty.header;
      p.axes = dirty.axes;
      if (c > 0 || s > 0) {
        const InputPlane& first = in.planes.front();
        if (dirty.width != first.dirty.width || dirty.height != first.dirty.height)
          throw clean::InvalidInput("'" + path + "' is " + std::to_string(dirty.width) + "x" +
                                    std::to_string(dirty.height) + ", but '" + in.set.dirty[0][0] + "' is " +
                                    std::to_string(first.dirty.width) + "x" + std::to_string(first.dirty.height) +
                                    "; give channels made on one grid.");
      }
      p.dirty = to_host(std::move(dirty));
      if (s == 0) {
        if (!r.prepared) std::rethrow_exception(r.error);
        warn(log, in.set.psf[c], r.prepared->warning);
        p.psf = std::move(r.prepared->psf);
      } else {
        p.psf = in.plane(c, 0).psf;
      }
    }
  }
  if (!all_weighted)
    log.warn("some channels of '%s' have no WSCIMGWG weight; every channel is weighted equally", o.dirty.c_str());
  if (!all_weighted)
    for (InputPlane& p : in.planes) p.weight = 1.0;
  in.weights_from_headers = all_weighted;
  // The header cards, not only the shape: the MFS outputs copy them (WCS, band, observation).
  in.mfs_headers.resize(in.stokes);
  for (std::size_t s = 0; s < in.stokes; ++s) {
    const std::string path = s == 0 ? in.set.mfs_dirty_first_pol
                                    : io::wsclean_name(in.set.prefix, -1, in.set.polarizations[s], "dirty");
    if (!path.empty() && std::filesystem::exists(path)) in.mfs_headers[s] = io::read_fits_header(path).header;
  }
  in.wcs = io::CelestialWcs::from_header(in.planes.front().header);
  return in;
}

CubeInput load_cube(const RunOptions& o, const Log& log) {
  CubeInput in;
  io::FitsCube dirty, psf;
  for_each_plane(2, plane_threads(2, o.settings.threads),
                 [&](std::size_t i) { (i == 0 ? dirty : psf) = io::read_fits_cube(i == 0 ? o.dirty : o.psf); });
  io::check_cubes_match(dirty, o.dirty, psf, o.psf);
  in.inputs = {o.dirty, o.psf};
  in.channels = dirty.channels;
  in.stokes = dirty.stokes;
  in.planes.resize(in.channels * in.stokes);
  std::vector<std::string> warnings(in.planes.size());
  std::vector<std::exception_ptr> errors(in.planes.size());
  for_each_plane(in.planes.size(), plane_threads(in.planes.size(), o.settings.threads), [&](std::size_t i) {
    const std::size_t s = i / in.channels, c = i % in.channels;
    InputPlane& p = in.planes[i];
    p.channel = c;
    p.stokes = s;
    p.pol = dirty.stokes_codes.size() > s && (in.stokes > 1 || dirty.stokes_codes[s] != 1)
                ? stokes_name(dirty.stokes_codes[s]) : (in.stokes > 1 ? stokes_name(1) : "");
    p.frequency_hz = dirty.frequencies_hz.empty() ? 0.0 : dirty.frequencies_hz[c];
    io::FitsImage plane = io::cube_plane(dirty, c, s);
    p.header = plane.header;
    p.axes = plane.axes;
    p.dirty = to_host(std::move(plane));
    try {
      Prepared prepared = prepare(io::cube_plane(psf, c, s), p.dirty.width, p.dirty.height, o.psf_unchecked);
      p.psf = std::move(prepared.psf);
      warnings[i] = std::move(prepared.warning);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (std::size_t i = 0; i < in.planes.size(); ++i) {  // in plane order, as one thread would have
    if (errors[i]) std::rethrow_exception(errors[i]);
    warn(log, o.psf + " (channel " + std::to_string(in.planes[i].channel) + ")", warnings[i]);
  }
  dirty.pixels.clear();
  dirty.pixels.shrink_to_fit();
  in.layout = std::move(dirty);
  in.wcs = io::CelestialWcs::from_header(in.layout.header);
  return in;
}

}  // namespace

std::string stokes_name(int code) {
  static const char* positive[] = {"I", "Q", "U", "V"};
  static const char* negative[] = {"RR", "LL", "RL", "LR", "XX", "YY", "XY", "YX"};
  if (code >= 1 && code <= 4) return positive[code - 1];
  if (code <= -1 && code >= -8) return negative[-code - 1];
  std::string out = "S";  // not "S" + to_string: GCC 12's -Wrestrict misfires on it
  return out += std::to_string(code);
}

bool is_cube_run(const RunOptions& o) {
  if (o.cube.wsclean_channels) return true;
  if (o.dirty.empty()) return false;
  const io::FitsCube shape = io::read_fits_cube_shape(o.dirty);
  return shape.planes() > 1;
}

CubeInput load_cube_input(const RunOptions& o, const Log& log) {
  CubeInput in = o.cube.wsclean_channels ? load_wsclean(o, log) : load_cube(o, log);
  const clean::CleanSettings& s = o.settings;
  // Per plane, in parallel: whether it is NaN everywhere, and its restoring beam. The failures
  // are then reported in the serial order: NaN planes first, then the settings, then the fits.
  std::vector<char> all_nan(in.planes.size(), 0);
  std::vector<std::exception_ptr> beam_error(in.planes.size());
  const bool fit = !(s.beam_shape && !in.wcs);
  for_each_plane(in.planes.size(), plane_threads(in.planes.size(), s.threads), [&](std::size_t i) {
    InputPlane& p = in.planes[i];
    std::size_t nan = 0;
    for (float v : p.dirty.pixels) nan += std::isnan(v);
    all_nan[i] = nan == p.dirty.size();
    if (all_nan[i] || !fit) return;
    try {
      const RestoringBeam beam = restoring_beam(s, p.psf, in.wcs);
      p.beam = beam.pixels;
      p.sky_beam = beam.sky;
    } catch (...) {
      beam_error[i] = std::current_exception();
    }
  });
  for (std::size_t i = 0; i < in.planes.size(); ++i) {
    const InputPlane& p = in.planes[i];
    if (all_nan[i])
      throw clean::InvalidInput("channel " + std::to_string(p.channel) + (p.pol.empty() ? "" : " " + p.pol) +
                                " of '" + o.dirty + "' is NaN everywhere; there is nothing to clean in it.");
  }
  if (!fit)
    throw clean::InvalidSettings("--beam-shape needs the pixel scale, but the input has no celestial WCS; leave "
                                 "--beam-shape out to fit each plane's PSF.");
  for (const std::exception_ptr& e : beam_error)
    if (e) std::rethrow_exception(e);
  return in;
}

}  // namespace gpuclean::app

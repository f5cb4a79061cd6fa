#include "app/cube/cube_input.hpp"

#include <cmath>
#include <filesystem>

#include "app/plane_io.hpp"
#include "clean/errors.hpp"
#include "io/fits_reader.hpp"

namespace gpuclean::app {
namespace {

clean::PreparedPsf prepare(io::FitsImage psf, std::size_t width, std::size_t height, bool unchecked,
                           const std::string& name, const Log& log) {
  std::string warning;
  clean::PreparedPsf out = prepare_fits_psf(std::move(psf), width, height, unchecked, &warning);
  if (!warning.empty()) log.warn("%s: %s", name.c_str(), warning.c_str());
  return out;
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

void set_beams(CubeInput& in, const RunOptions& o) {
  const clean::CleanSettings& s = o.settings;
  if (s.beam_shape && !in.wcs)
    throw clean::InvalidSettings("--beam-shape needs the pixel scale, but the input has no celestial WCS; leave "
                                 "--beam-shape out to fit each plane's PSF.");
  for (InputPlane& p : in.planes) {
    const RestoringBeam beam = restoring_beam(s, p.psf, in.wcs);
    p.beam = beam.pixels;
    p.sky_beam = beam.sky;
  }
}

CubeInput load_wsclean(const RunOptions& o, const Log& log) {
  CubeInput in;
  in.wsclean = true;
  in.set = io::find_wsclean_channels(o.dirty);
  in.channels = in.set.channels;
  in.stokes = std::max<std::size_t>(1, in.set.polarizations.size());
  in.planes.resize(in.channels * in.stokes);
  std::vector<clean::PreparedPsf> psfs;
  bool all_weighted = true;
  for (std::size_t c = 0; c < in.channels; ++c) {
    io::FitsImage psf = io::read_fits_image(in.set.psf[c]);
    in.inputs.push_back(in.set.psf[c]);
    const auto psf_weight = psf.header.get_double("WSCIMGWG");
    for (std::size_t s = 0; s < in.stokes; ++s) {
      const std::string& path = in.set.dirty[s][c];
      io::FitsImage dirty = io::read_fits_image(path);
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
      if (s == 0) p.psf = prepare(psf, p.dirty.width, p.dirty.height, o.psf_unchecked, in.set.psf[c], log);
      else p.psf = in.plane(c, 0).psf;
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
  io::FitsCube dirty = io::read_fits_cube(o.dirty);
  io::FitsCube psf = io::read_fits_cube(o.psf);
  io::check_cubes_match(dirty, o.dirty, psf, o.psf);
  in.inputs = {o.dirty, o.psf};
  in.channels = dirty.channels;
  in.stokes = dirty.stokes;
  in.planes.resize(in.channels * in.stokes);
  for (std::size_t s = 0; s < in.stokes; ++s) {
    for (std::size_t c = 0; c < in.channels; ++c) {
      InputPlane& p = in.plane(c, s);
      p.channel = c;
      p.stokes = s;
      p.pol = dirty.stokes_codes.size() > s && (in.stokes > 1 || dirty.stokes_codes[s] != 1)
                  ? stokes_name(dirty.stokes_codes[s]) : (in.stokes > 1 ? stokes_name(1) : "");
      p.frequency_hz = dirty.frequencies_hz.empty() ? 0.0 : dirty.frequencies_hz[c];
      io::FitsImage plane = io::cube_plane(dirty, c, s);
      p.header = plane.header;
      p.axes = plane.axes;
      p.dirty = to_host(std::move(plane));
      p.psf = prepare(io::cube_plane(psf, c, s), p.dirty.width, p.dirty.height, o.psf_unchecked,
                      o.psf + " (channel " + std::to_string(c) + ")", log);
    }
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
  return "S" + std::to_string(code);
}

bool is_cube_run(const RunOptions& o) {
  if (o.cube.wsclean_channels) return true;
  if (o.dirty.empty()) return false;
  const io::FitsCube shape = io::read_fits_cube_shape(o.dirty);
  return shape.planes() > 1;
}

CubeInput load_cube_input(const RunOptions& o, const Log& log) {
  CubeInput in = o.cube.wsclean_channels ? load_wsclean(o, log) : load_cube(o, log);
  for (const InputPlane& p : in.planes) {
    std::size_t nan = 0;
    for (float v : p.dirty.pixels) nan += std::isnan(v);
    if (nan == p.dirty.size())
      throw clean::InvalidInput("channel " + std::to_string(p.channel) + (p.pol.empty() ? "" : " " + p.pol) +
                                " of '" + o.dirty + "' is NaN everywhere; there is nothing to clean in it.");
  }
  set_beams(in, o);
  return in;
}

}  // namespace gpuclean::app

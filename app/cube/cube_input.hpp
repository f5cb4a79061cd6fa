#pragma once
// The planes of a spectral cube or a WSClean channel set, read and prepared for CLEAN: each
// plane's dirty image, PSF (prepared, unit peak), frequency, Stokes parameter, channel weight and
// restoring beam, plus what the outputs need (headers, the cube's layout, the MFS files).
//
// Channel weights, which make the integrated image of --join-channels and the MFS images: a
// WSClean channel's WSCIMGWG (the sum of its imaging weights, from the PSF's header, else the
// dirty image's); equal weights for a cube, whose header records none.

#include <optional>
#include <string>
#include <vector>

#include "app/log.hpp"
#include "app/run_options.hpp"
#include "clean/beam.hpp"
#include "clean/host_image.hpp"
#include "clean/psf.hpp"
#include "io/fits_cube.hpp"
#include "io/fits_header.hpp"
#include "io/wcs.hpp"
#include "io/wsclean_channels.hpp"

namespace gpuclean::app {

struct InputPlane {
  std::size_t channel = 0, stokes = 0;
  double frequency_hz = 0.0;
  std::string pol;                 ///< "I", "Q", ... (empty: no Stokes axis or part)
  double weight = 1.0;
  clean::HostImage dirty;
  clean::PreparedPsf psf;
  clean::PixelGaussian beam;       ///< restoring beam in pixels
  std::optional<clean::SkyBeam> sky_beam;
  io::FitsHeader header;           ///< the plane's own header (WSClean channel files; cubes: the cube's)
  std::vector<long> axes;
};

struct CubeInput {
  bool wsclean = false;
  std::size_t channels = 1, stokes = 1;
  std::vector<InputPlane> planes;  ///< plane (channel c, stokes s) at s * channels + c
  io::FitsCube layout;             ///< a cube's shape and header (no pixels)
  io::WscleanChannelSet set;       ///< WSClean input: its files
  std::vector<std::string> inputs; ///< every file read (never an output)
  std::optional<io::CelestialWcs> wcs;
  bool weights_from_headers = false;
  /// WSClean: NAME-MFS[-POL]-dirty.fits's header per Stokes parameter, where the set has one.
  std::vector<std::optional<io::FitsHeader>> mfs_headers;
  InputPlane& plane(std::size_t c, std::size_t s) { return planes[s * channels + c]; }
  const InputPlane& plane(std::size_t c, std::size_t s) const { return planes[s * channels + c]; }
};

/// True when the single command's inputs are a cube or a WSClean channel set.
bool is_cube_run(const RunOptions& o);

/// Reads and prepares every plane. Throws InvalidInput / FitsError with one line on mismatches.
CubeInput load_cube_input(const RunOptions& o, const Log& log);

/// The Stokes name of a FITS STOKES code (1 I, 2 Q, 3 U, 4 V, -1 RR ... -8 YX).
std::string stokes_name(int code);

}  // namespace gpuclean::app

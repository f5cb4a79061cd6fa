#pragma once
// Spectral cubes: a FITS image whose axes 3 and 4 are FREQ and STOKES, in either order (WSClean
// writes FREQ first, CASA often STOKES first), with CASA's per-plane restoring beams (the `BEAMS`
// binary table, CASAMBM = T) when the planes' beams differ.

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "io/fits_header.hpp"
#include "io/fits_image.hpp"
#include "io/fits_writer.hpp"

namespace gpuclean::io {

enum class CubeAxis { kFreq, kStokes };

/// One plane's restoring beam, in degrees (BMAJ/BMIN FWHM, BPA north through east).
struct CubeBeam {
  double bmaj_deg = 0.0, bmin_deg = 0.0, bpa_deg = 0.0;
};

/// A cube's shape, axes and pixels. Plane (channel c, Stokes s) is stored at plane_index(c, s):
/// the axis listed first in `order` varies fastest, as in the file.
struct FitsCube {
  std::size_t width = 0, height = 0;
  std::size_t channels = 1, stokes = 1;
  std::array<CubeAxis, 2> order{CubeAxis::kFreq, CubeAxis::kStokes};  ///< axes 3 and 4
  int freq_axis = 0, stokes_axis = 0;  ///< FITS axis numbers (3 or 4) of the two, 0 when the file has none
  /// Each channel's centre and width (Hz), from CRVAL/CDELT/CRPIX of the FREQ axis; empty when
  /// the file has none (a 2-D image, or a spectral axis in velocity).
  std::vector<double> frequencies_hz, channel_widths_hz;
  std::vector<int> stokes_codes;  ///< FITS STOKES codes (1 I, 2 Q, 3 U, 4 V, -1 RR ...); {1} when absent
  std::vector<float> pixels;      ///< every plane, in the file's order; empty from read_fits_cube_shape
  /// Per-plane beams from a BEAMS table, at beam_index(c, s); empty when the file has none.
  std::vector<CubeBeam> beams;
  FitsHeader header;              ///< data-describing cards, as read_fits_image keeps them
  std::vector<long> axes;         ///< lengths as stored, e.g. {N, N, 16, 1}
  int bitpix = -32;
  std::size_t nan_count = 0;

  std::size_t planes() const { return channels * stokes; }
  std::size_t plane_index(std::size_t c, std::size_t s) const {
    return order[0] == CubeAxis::kFreq ? s * channels + c : c * stokes + s;
  }
  /// Index into `beams` (and into the planes lists of the callers): Stokes-major, channel fastest.
  std::size_t beam_index(std::size_t c, std::size_t s) const { return s * channels + c; }
  const float* plane(std::size_t c, std::size_t s) const { return pixels.data() + plane_index(c, s) * width * height; }
};

/// Reads a cube (or a 2-D image, or a 3-D/4-D one with degenerate axes: one plane). The axes
/// after the second must be FREQ, STOKES or a spectral axis without frequencies (VRAD, VOPT,
/// FELO, VELO...), at most one of each. Throws FitsError(kInput) naming the file and the fix.
FitsCube read_fits_cube(const std::string& path);

/// The same checks and shape (axes, channels, Stokes codes, frequencies) without the pixels.
FitsCube read_fits_cube_shape(const std::string& path);

/// Plane (c, s) as a one-plane image: its pixels, the cube's header with the FREQ axis moved to
/// that channel (CRPIX 1, CRVAL its frequency) and the STOKES axis to that code, axes of length 1
/// in the cube's order, and its BEAMS entry (if any) as BMAJ/BMIN/BPA.
FitsImage cube_plane(const FitsCube& cube, std::size_t c, std::size_t s);

/// Throws FitsError(kInput) with one line naming what differs when a dirty and a PSF cube do not
/// describe the same planes: channel count, Stokes list, a channel's frequency, pixel scale.
void check_cubes_match(const FitsCube& dirty, const std::string& dirty_path, const FitsCube& psf,
                       const std::string& psf_path);

/// Writes `pixels` (planes in layout's file order) atomically with `header`'s cards. `beams`
/// (beam_index order, or empty): all equal -> BMAJ/BMIN/BPA; different -> a CASA `BEAMS` table
/// (BMAJ/BMIN arcsec, BPA deg, CHAN, POL) and CASAMBM = T, with no BMAJ in the primary header.
/// Empty beams leave options.beam in charge, as write_fits_image does.
void write_fits_cube(const std::string& path, const FitsCube& layout, const float* pixels, const FitsHeader& header,
                     const std::vector<CubeBeam>& beams, const WriteOptions& options);

}  // namespace gpuclean::io

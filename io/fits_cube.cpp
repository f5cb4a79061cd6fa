#include "io/fits_cube.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>
#include <limits>

#include "io/fits_file.hpp"
#include "io/fits_open.hpp"
#include "io/fits_write_file.hpp"

namespace gpuclean::io {
namespace {

using detail::check_fits;
constexpr auto kInput = FitsError::Kind::kInput;
constexpr auto kOutput = FitsError::Kind::kOutput;

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// Spectral axes in velocity or wavelength (FITS paper III) carry channels but no frequencies.
bool is_other_spectral(const std::string& type) {
  static const char* kTypes[] = {"VRAD", "VOPT", "VELO", "FELO", "ZOPT", "WAVE", "AWAV", "WAVN", "BETA", "ENER", "VTOP"};
  for (const char* t : kTypes)
    if (type.rfind(t, 0) == 0) return true;
  return false;
}

// Sets the FREQ/STOKES axes, order, channel frequencies and Stokes codes from the header.
void describe_axes(FitsCube& cube, const std::string& path) {
  const FitsHeader& h = cube.header;
  int spectral_axis = 0;
  for (std::size_t a = 2; a < cube.axes.size(); ++a) {
    const int n = static_cast<int>(a) + 1;
    const std::string type = upper(h.get_string("CTYPE" + std::to_string(n)).value_or(""));
    const long length = cube.axes[a];
    int* slot = nullptr;
    if (type.rfind("STOKES", 0) == 0) slot = &cube.stokes_axis;
    else if (type.rfind("FREQ", 0) == 0) slot = &cube.freq_axis;
    else if (is_other_spectral(type)) slot = &spectral_axis;
    else if (length == 1) continue;  // a degenerate axis of another kind holds no planes
    else
      throw FitsError(kInput, "'" + path + "' axis " + std::to_string(n) + " is '" + type + "' of length " +
                                  std::to_string(length) + "; gpuclean reads cubes whose third and fourth axes are "
                                  "FREQ and STOKES. Regrid or relabel the cube.");
    const bool spectral = slot != &cube.stokes_axis;
    if (*slot != 0 || (spectral && (cube.freq_axis != 0 || spectral_axis != 0)))
      throw FitsError(kInput, "'" + path + "' has two " + (slot == &cube.stokes_axis ? "Stokes" : "spectral") +
                                  " axes; give a cube with one FREQ and one STOKES axis.");
    *slot = n;
  }
  const int channel_axis = cube.freq_axis ? cube.freq_axis : spectral_axis;
  cube.channels = channel_axis ? static_cast<std::size_t>(cube.axes[channel_axis - 1]) : 1;
  cube.stokes = cube.stokes_axis ? static_cast<std::size_t>(cube.axes[cube.stokes_axis - 1]) : 1;
  const int big = 99;
  cube.order = (cube.stokes_axis ? cube.stokes_axis : big) < (channel_axis ? channel_axis : big)
                   ? std::array<CubeAxis, 2>{CubeAxis::kStokes, CubeAxis::kFreq}
                   : std::array<CubeAxis, 2>{CubeAxis::kFreq, CubeAxis::kStokes};

  const auto value = [&](const char* key, int axis, double fallback) {
    return h.get_double(key + std::to_string(axis)).value_or(fallback);
  };
  if (cube.freq_axis) {
    const auto crval = h.get_double("CRVAL" + std::to_string(cube.freq_axis));
    if (crval) {
      const double crpix = value("CRPIX", cube.freq_axis, 1.0), cdelt = value("CDELT", cube.freq_axis, 0.0);
      if (cube.channels > 1 && cdelt == 0.0)
        throw FitsError(kInput, "'" + path + "' has " + std::to_string(cube.channels) + " channels but no CDELT" +
                                    std::to_string(cube.freq_axis) + "; the channels' frequencies are unknown. Add "
                                    "the channel width to the header.");
      for (std::size_t c = 0; c < cube.channels; ++c) {
        cube.frequencies_hz.push_back(*crval + (static_cast<double>(c) + 1.0 - crpix) * cdelt);
        cube.channel_widths_hz.push_back(std::abs(cdelt));
      }
    }
  }
  if (cube.stokes_axis) {
    const double crval = value("CRVAL", cube.stokes_axis, 1.0), crpix = value("CRPIX", cube.stokes_axis, 1.0),
                 cdelt = value("CDELT", cube.stokes_axis, 1.0);
    for (std::size_t s = 0; s < cube.stokes; ++s)
      cube.stokes_codes.push_back(static_cast<int>(std::lround(crval + (static_cast<double>(s) + 1.0 - crpix) * cdelt)));
  } else {
    cube.stokes_codes = {1};
  }
}

// CASA's per-plane beams: the BEAMS binary table (BMAJ, BMIN in arcsec unless TUNIT says
// otherwise, BPA in degrees, CHAN, POL). Leaves the file at the table's HDU.
void read_beams(fitsfile* f, FitsCube& cube, const std::string& path) {
  int status = 0;
  fits_movnam_hdu(f, BINARY_TBL, const_cast<char*>("BEAMS"), 0, &status);
  if (status == BAD_HDU_NUM) return;
  check_fits(status, kInput, "cannot read the BEAMS table of", path);
  long rows = 0;
  fits_get_num_rows(f, &rows, &status);
  check_fits(status, kInput, "cannot read the BEAMS table of", path);
  const auto column = [&](const char* name) {
    int col = 0, st = 0;
    fits_get_colnum(f, CASEINSEN, const_cast<char*>(name), &col, &st);
    if (st != 0)
      throw FitsError(kInput, "'" + path + "' has a BEAMS table without a " + name + " column; CASA's table has "
                                  "BMAJ, BMIN, BPA, CHAN and POL. Fix or remove the table.");
    return col;
  };
  const auto scale_to_deg = [&](int col, double fallback) {
    char key[FLEN_KEYWORD], unit[FLEN_VALUE] = "";
    std::snprintf(key, sizeof key, "TUNIT%d", col);
    int st = 0;
    fits_read_key(f, TSTRING, key, unit, nullptr, &st);
    const std::string u = st == 0 ? upper(unit) : "";
    if (u.rfind("ARCSEC", 0) == 0) return 1.0 / 3600.0;
    if (u.rfind("ARCMIN", 0) == 0) return 1.0 / 60.0;
    if (u.rfind("DEG", 0) == 0) return 1.0;
    if (u.rfind("RAD", 0) == 0) return 180.0 / M_PI;
    return fallback;
  };
  const int cmaj = column("BMAJ"), cmin = column("BMIN"), cpa = column("BPA"), cchan = column("CHAN"),
            cpol = column("POL");
  const double smaj = scale_to_deg(cmaj, 1.0 / 3600.0), smin = scale_to_deg(cmin, 1.0 / 3600.0),
               spa = scale_to_deg(cpa, 1.0);
  const auto n = static_cast<std::size_t>(rows);
  std::vector<double> maj(n), min(n), pa(n);
  std::vector<long> chan(n), pol(n);
  fits_read_col(f, TDOUBLE, cmaj, 1, 1, rows, nullptr, maj.data(), nullptr, &status);
  fits_read_col(f, TDOUBLE, cmin, 1, 1, rows, nullptr, min.data(), nullptr, &status);
  fits_read_col(f, TDOUBLE, cpa, 1, 1, rows, nullptr, pa.data(), nullptr, &status);
  fits_read_col(f, TLONG, cchan, 1, 1, rows, nullptr, chan.data(), nullptr, &status);
  fits_read_col(f, TLONG, cpol, 1, 1, rows, nullptr, pol.data(), nullptr, &status);
  check_fits(status, kInput, "cannot read the BEAMS table of", path);
  if (n != cube.planes())
    throw FitsError(kInput, "'" + path + "' has a BEAMS table of " + std::to_string(n) + " rows for " +
                                std::to_string(cube.planes()) + " planes; it needs one row per channel and Stokes "
                                "plane. Fix or remove the table.");
  cube.beams.assign(n, CubeBeam{});
  std::vector<char> seen(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    if (chan[r] < 0 || pol[r] < 0 || static_cast<std::size_t>(chan[r]) >= cube.channels ||
        static_cast<std::size_t>(pol[r]) >= cube.stokes)
      throw FitsError(kInput, "'" + path + "' BEAMS row " + std::to_string(r + 1) + " names channel " +
                                  std::to_string(chan[r]) + ", Stokes " + std::to_string(pol[r]) +
                                  ", outside the cube. Fix or remove the table.");
    const std::size_t i = cube.beam_index(static_cast<std::size_t>(chan[r]), static_cast<std::size_t>(pol[r]));
    cube.beams[i] = {maj[r] * smaj, min[r] * smin, pa[r] * spa};
    seen[i] = 1;
  }
  if (std::find(seen.begin(), seen.end(), 0) != seen.end())
    throw FitsError(kInput, "'" + path + "' has a BEAMS table that names a plane twice; it needs one row per "
                                "channel and Stokes plane. Fix or remove the table.");
}

void require_one_plane(const std::string& path, const std::vector<long>& axes) {
  for (std::size_t a = 2; a < axes.size(); ++a) {
    if (axes[a] != 1) {
      throw FitsError(kInput, "'" + path + "' holds more than one plane (axis " + std::to_string(a + 1) +
                                  " has length " + std::to_string(axes[a]) +
                                  "); clean it as a cube with the single command (gpuclean CUBE PSF-CUBE -o OUT), "
                                  "or extract one frequency and Stokes plane first.");
    }
  }
}

std::string describe_scale(const std::optional<double>& v) { return v ? std::to_string(*v) : "none"; }

}  // namespace

namespace detail {

FitsCube read_cube(const std::string& path, const CubeParts& parts) {
  FitsImage shape;
  FitsFilePtr file = open_image(path, shape);
  if (parts.one_plane) require_one_plane(path, shape.axes);
  FitsCube cube;
  cube.width = shape.width;
  cube.height = shape.height;
  cube.axes = shape.axes;
  cube.bitpix = shape.bitpix;
  if (!parts.header) return cube;
  cube.header = read_header(file.get(), path);
  if (!parts.one_plane) describe_axes(cube, path);
  if (parts.pixels) {
    const std::size_t n = cube.width * cube.height * cube.planes();
    float* out = nullptr;
    if (parts.into) {
      out = (*parts.into)(n);
    } else {
      cube.pixels.resize(n);
      out = cube.pixels.data();
    }
    cube.nan_count = read_pixels(file.get(), path, cube.axes.size(), out, n);
  }
  if (cube.planes() > 1) read_beams(file.get(), cube, path);
  return cube;
}

FitsImage one_plane_image(FitsCube&& cube) {
  FitsImage image;
  image.width = cube.width;
  image.height = cube.height;
  image.pixels = std::move(cube.pixels);
  image.header = std::move(cube.header);
  image.axes = std::move(cube.axes);
  image.bitpix = cube.bitpix;
  image.nan_count = cube.nan_count;
  return image;
}

}  // namespace detail

FitsCube read_fits_cube(const std::string& path) { return detail::read_cube(path, {}); }
FitsCube read_fits_cube_shape(const std::string& path) { return detail::read_cube(path, {.pixels = false}); }

FitsImage cube_plane(const FitsCube& cube, std::size_t c, std::size_t s) {
  FitsImage img;
  img.width = cube.width;
  img.height = cube.height;
  img.bitpix = cube.bitpix;
  img.header = cube.header;
  const std::size_t n = cube.width * cube.height;
  if (!cube.pixels.empty()) {
    const float* p = cube.plane(c, s);
    img.pixels.assign(p, p + n);
    img.nan_count = static_cast<std::size_t>(std::count_if(p, p + n, [](float v) { return std::isnan(v); }));
  }
  img.axes = cube.axes;
  for (std::size_t a = 2; a < img.axes.size(); ++a) img.axes[a] = 1;
  if (cube.freq_axis && !cube.frequencies_hz.empty()) {
    const std::string k = std::to_string(cube.freq_axis);
    img.header.set_double("CRPIX" + k, 1.0);
    img.header.set_double("CRVAL" + k, cube.frequencies_hz[c]);
    img.header.set_double("CDELT" + k, cube.channel_widths_hz[c]);
  }
  if (cube.stokes_axis) {
    const std::string k = std::to_string(cube.stokes_axis);
    img.header.set_double("CRPIX" + k, 1.0);
    img.header.set_double("CRVAL" + k, cube.stokes_codes[s]);
    img.header.set_double("CDELT" + k, 1.0);
  }
  if (!cube.beams.empty()) {
    const CubeBeam& b = cube.beams[cube.beam_index(c, s)];
    img.header.remove("CASAMBM");
    img.header.set_double("BMAJ", b.bmaj_deg);
    img.header.set_double("BMIN", b.bmin_deg);
    img.header.set_double("BPA", b.bpa_deg);
  }
  return img;
}

void check_cubes_match(const FitsCube& dirty, const std::string& dirty_path, const FitsCube& psf,
                       const std::string& psf_path) {
  const std::string both = " ('" + dirty_path + "' and '" + psf_path + "')";
  const auto refuse = [&](const std::string& what) {
    throw FitsError(kInput, "the dirty and PSF cubes differ: " + what + both +
                                "; give a PSF cube made with the dirty cube.");
  };
  if (dirty.channels != psf.channels)
    refuse(std::to_string(dirty.channels) + " channels against " + std::to_string(psf.channels));
  if (dirty.stokes_codes != psf.stokes_codes) {
    const auto list = [](const std::vector<int>& codes) {
      std::string s;
      for (int c : codes) s += (s.empty() ? "" : ",") + std::to_string(c);
      return s;
    };
    refuse("Stokes codes " + list(dirty.stokes_codes) + " against " + list(psf.stokes_codes));
  }
  if (dirty.frequencies_hz.empty() != psf.frequencies_hz.empty())
    refuse(std::string("only the ") + (dirty.frequencies_hz.empty() ? "PSF" : "dirty") + " cube has frequencies");
  for (std::size_t c = 0; c < dirty.frequencies_hz.size(); ++c) {
    const double a = dirty.frequencies_hz[c], b = psf.frequencies_hz[c];
    if (std::abs(a - b) > 1e-6 * std::max(std::abs(a), std::abs(b)))
      refuse("channel " + std::to_string(c) + " is at " + std::to_string(a / 1e6) + " MHz against " +
             std::to_string(b / 1e6) + " MHz");
  }
  for (const char* key : {"CDELT1", "CDELT2"}) {
    const auto a = dirty.header.get_double(key), b = psf.header.get_double(key);
    if (a && b && std::abs(*a - *b) > 1e-6 * std::max(std::abs(*a), std::abs(*b)))
      refuse(std::string("the pixel scale ") + key + " is " + describe_scale(a) + " against " + describe_scale(b));
  }
}

void write_fits_cube(const std::string& path, const FitsCube& layout, const float* pixels, const FitsHeader& header,
                     const std::vector<CubeBeam>& beams, const WriteOptions& options) {
  std::vector<long> shape = layout.axes;
  if (shape.empty()) {
    shape = {static_cast<long>(layout.width), static_cast<long>(layout.height)};
    const bool freq_first = layout.order[0] == CubeAxis::kFreq;
    shape.push_back(static_cast<long>(freq_first ? layout.channels : layout.stokes));
    shape.push_back(static_cast<long>(freq_first ? layout.stokes : layout.channels));
  }
  std::size_t stored = 1;
  for (long a : shape) stored *= static_cast<std::size_t>(a);
  if (shape.size() < 2 || stored != layout.width * layout.height * layout.planes())
    throw FitsError(kOutput, "internal: the cube's axes do not match its planes for '" + path + "'");
  if (!beams.empty() && beams.size() != layout.planes())
    throw FitsError(kOutput, "internal: " + std::to_string(beams.size()) + " beams for " +
                                 std::to_string(layout.planes()) + " planes in '" + path + "'");

  WriteOptions o = options;
  const bool common = !beams.empty() && std::all_of(beams.begin(), beams.end(), [&](const CubeBeam& b) {
    return b.bmaj_deg == beams[0].bmaj_deg && b.bmin_deg == beams[0].bmin_deg && b.bpa_deg == beams[0].bpa_deg;
  });
  detail::ExtensionWriter table;
  if (common) {
    o.beam = BeamKeywords{beams[0].bmaj_deg, beams[0].bmin_deg, beams[0].bpa_deg};
  } else if (!beams.empty()) {
    o.beam.reset();
    o.keywords.push_back({"CASAMBM", true, "per-plane restoring beams in the BEAMS table"});
    table = [&](fitsfile* f, const std::string& out) {
      int status = 0;
      char* names[] = {const_cast<char*>("BMAJ"), const_cast<char*>("BMIN"), const_cast<char*>("BPA"),
                       const_cast<char*>("CHAN"), const_cast<char*>("POL")};
      char* forms[] = {const_cast<char*>("1E"), const_cast<char*>("1E"), const_cast<char*>("1E"),
                       const_cast<char*>("1J"), const_cast<char*>("1J")};
      char* units[] = {const_cast<char*>("arcsec"), const_cast<char*>("arcsec"), const_cast<char*>("deg"),
                       const_cast<char*>(""), const_cast<char*>("")};
      const auto rows = static_cast<LONGLONG>(beams.size());
      fits_create_tbl(f, BINARY_TBL, rows, 5, names, forms, units, "BEAMS", &status);
      long nchan = static_cast<long>(layout.channels), npol = static_cast<long>(layout.stokes);
      fits_update_key(f, TLONG, "NCHAN", &nchan, "channels", &status);
      fits_update_key(f, TLONG, "NPOL", &npol, "Stokes planes", &status);
      std::vector<float> maj, min, pa;
      std::vector<int> chan, pol;
      for (std::size_t s = 0; s < layout.stokes; ++s) {
        for (std::size_t c = 0; c < layout.channels; ++c) {
          const CubeBeam& b = beams[layout.beam_index(c, s)];
          maj.push_back(static_cast<float>(b.bmaj_deg * 3600.0));
          min.push_back(static_cast<float>(b.bmin_deg * 3600.0));
          pa.push_back(static_cast<float>(b.bpa_deg));
          chan.push_back(static_cast<int>(c));
          pol.push_back(static_cast<int>(s));
        }
      }
      fits_write_col(f, TFLOAT, 1, 1, 1, rows, maj.data(), &status);
      fits_write_col(f, TFLOAT, 2, 1, 1, rows, min.data(), &status);
      fits_write_col(f, TFLOAT, 3, 1, 1, rows, pa.data(), &status);
      fits_write_col(f, TINT, 4, 1, 1, rows, chan.data(), &status);
      fits_write_col(f, TINT, 5, 1, 1, rows, pol.data(), &status);
      fits_write_chksum(f, &status);
      check_fits(status, kOutput, "cannot write the BEAMS table of", out);
    };
  }
  detail::write_fits_file(path, pixels, shape, header, o, table);
}

}  // namespace gpuclean::io

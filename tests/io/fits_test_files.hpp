#pragma once
// Writes FITS files directly with CFITSIO, independently of gpuclean's writer, so the reader is
// tested against files it did not make.

#include <fitsio.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuclean::test {

struct RawFitsSpec {
  int bitpix = -32;
  std::vector<long> axes = {4, 3};
  double bscale = 1.0, bzero = 0.0;
  bool blank = false;
  long long blank_value = -32768;
  bool in_extension = false;  ///< empty primary HDU, image in extension 1
};

/// Writes `values` (physical values, converted by BSCALE/BZERO) with the given layout. Values that
/// are NaN are written as BLANK (integers) or NaN (floats).
inline void write_raw_fits(const std::string& path, const RawFitsSpec& spec, const std::vector<double>& values) {
  int status = 0;
  fitsfile* f = nullptr;
  fits_create_diskfile(&f, path.c_str(), &status);
  if (spec.in_extension) fits_create_img(f, 8, 0, nullptr, &status);
  std::vector<long> axes = spec.axes;
  fits_create_img(f, spec.bitpix, static_cast<int>(axes.size()), axes.data(), &status);
  fits_write_key_str(f, "CTYPE1", "RA---SIN", "", &status);
  fits_write_key_str(f, "CTYPE2", "DEC--SIN", "", &status);
  double v = 2.0;
  fits_write_key_dbl(f, "CRPIX1", v, -10, "", &status);
  fits_write_key_str(f, "TELESCOP", "TESTSCOPE", "", &status);
  fits_write_key_dbl(f, "RESTFRQ", 1.420405752e9, -12, "rest frequency", &status);
  fits_write_history(f, "made by the gpuclean test suite", &status);
  if (spec.bscale != 1.0 || spec.bzero != 0.0) {
    fits_write_key_dbl(f, "BSCALE", spec.bscale, -12, "", &status);
    fits_write_key_dbl(f, "BZERO", spec.bzero, -12, "", &status);
    fits_set_bscale(f, spec.bscale, spec.bzero, &status);
  }
  if (spec.blank) {
    fits_write_key_lng(f, "BLANK", spec.blank_value, "", &status);
    fits_set_imgnull(f, spec.blank_value, &status);
  }
  // CFITSIO compares values with the null value, and NaN never compares equal: use a sentinel.
  double nulval = -1e30;
  std::vector<double> data = values;
  if (spec.bitpix > 0)
    for (double& d : data)
      if (std::isnan(d)) d = nulval;
  fits_write_imgnull(f, TDOUBLE, 1, static_cast<LONGLONG>(data.size()), data.data(), &nulval, &status);
  fits_close_file(f, &status);
  if (status) {
    char text[FLEN_STATUS];
    fits_get_errstatus(status, text);
    throw std::runtime_error(std::string("test file: ") + text);
  }
}

}  // namespace gpuclean::test

#pragma once
// RAII over CFITSIO's fitsfile*, and the translation of CFITSIO status codes into FitsError.
// Private to io/: nothing outside this module includes fitsio.h.

#include <fitsio.h>

#include <memory>
#include <string>

#include "io/fits_error.hpp"

namespace gpuclean::io::detail {

struct FitsCloser {
  void operator()(fitsfile* f) const noexcept {
    int status = 0;
    fits_close_file(f, &status);
  }
};
using FitsFilePtr = std::unique_ptr<fitsfile, FitsCloser>;

/// CFITSIO's own text for a status code.
std::string fits_status_text(int status);

/// Throws FitsError(kind, "<what> '<path>': <CFITSIO text>") when status is non-zero.
void check_fits(int status, FitsError::Kind kind, const std::string& what, const std::string& path);

}  // namespace gpuclean::io::detail

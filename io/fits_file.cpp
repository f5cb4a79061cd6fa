#include "io/fits_file.hpp"

namespace gpuclean::io::detail {

std::string fits_status_text(int status) {
  char text[FLEN_STATUS] = {0};
  fits_get_errstatus(status, text);
  fits_clear_errmsg();
  return text;
}

void check_fits(int status, FitsError::Kind kind, const std::string& what, const std::string& path) {
  if (status == 0) return;
  throw FitsError(kind, what + " '" + path + "': " + fits_status_text(status) + " (CFITSIO status " +
                            std::to_string(status) + ")");
}

}  // namespace gpuclean::io::detail

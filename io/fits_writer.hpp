#pragma once
// Writes float32 images atomically: the data go to a temporary file in the target folder, which
// is renamed into place only once complete. A crash never leaves a half-written output.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "io/fits_header.hpp"

namespace gpuclean::io {

/// A keyword written into an output header (provenance, beam, units).
struct Keyword {
  std::string name;
  std::variant<std::string, double, long long, bool> value;
  std::string comment;
};

/// Restoring beam in degrees, as BMAJ/BMIN/BPA are written by WSClean and CASA.
struct BeamKeywords {
  double bmaj_deg = 0.0;
  double bmin_deg = 0.0;
  double bpa_deg = 0.0;
};

struct WriteOptions {
  std::string bunit = "JY/BEAM";
  std::optional<BeamKeywords> beam;  ///< BMAJ/BMIN/BPA; removed from the output when empty
  std::vector<Keyword> keywords;     ///< ORIGIN, GC* provenance, ...
  std::vector<std::string> history;  ///< appended after the input's HISTORY cards
  bool overwrite = false;
  std::vector<std::string> inputs;   ///< never written over, even with overwrite
};

/// Throws FitsError(kExists) when `path` exists and overwrite is off, or when it names one of
/// the inputs. Call it for every output before any work starts.
void check_output_path(const std::string& path, const WriteOptions& options);

/// Writes one plane with the input's header cards: a one-plane cube (write_fits_cube). `axes`
/// gives the stored shape (e.g. {N, N, 1, 1}); its first two lengths must be width and height,
/// the others 1.
void write_fits_image(const std::string& path, const float* pixels, std::size_t width,
                      std::size_t height, const FitsHeader& header, const std::vector<long>& axes,
                      const WriteOptions& options);

}  // namespace gpuclean::io

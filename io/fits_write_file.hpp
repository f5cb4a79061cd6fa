#pragma once
// The atomic float-image writer under write_fits_cube (write_fits_image writes a one-plane cube
// through it). Private to io/.

#include <functional>
#include <string>
#include <vector>

#include "io/fits_file.hpp"
#include "io/fits_header.hpp"
#include "io/fits_writer.hpp"

namespace gpuclean::io::detail {

/// Appends HDUs after the primary image (a BEAMS table); throws FitsError(kOutput) on failure.
using ExtensionWriter = std::function<void(fitsfile*, const std::string& path)>;

/// Writes a primary float image of `shape` with `header`'s cards and `options` into a temporary
/// file beside `path`, then `extensions`, and renames it into place once complete.
void write_fits_file(const std::string& path, const float* pixels, const std::vector<long>& shape,
                     const FitsHeader& header, const WriteOptions& options, const ExtensionWriter& extensions);

}  // namespace gpuclean::io::detail

#pragma once
#include <string>

namespace gpuclean::io {

/// Writes a text file (CSV, JSON) through a temporary file in the same folder and a rename, so
/// that a crash never leaves a partial file. Throws FitsError(kExists) if `path` exists and
/// overwrite is off, FitsError(kOutput) when it cannot be written.
void write_text_file(const std::string& path, const std::string& content, bool overwrite);

}  // namespace gpuclean::io

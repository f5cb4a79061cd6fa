#pragma once
#include <string>

namespace gpuclean::io {

/// Moves the finished file `tmp` to `target` (same folder) by a rename. Without `overwrite` it
/// never replaces a file: FitsError(kExists) if `target` exists (RENAME_NOREPLACE, or a check
/// where the filesystem lacks it). FitsError(kOutput) when the rename fails otherwise.
void publish_file(const std::string& tmp, const std::string& target, bool overwrite);

}  // namespace gpuclean::io

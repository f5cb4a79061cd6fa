#pragma once
#include <string>

namespace gpuclean::io {

/// Moves the finished file `tmp` to `target` (same folder) by a rename. Without `overwrite` it
/// never replaces a file: FitsError(kExists) if `target` exists (RENAME_NOREPLACE, or a check
/// where the filesystem lacks it). FitsError(kOutput) when the rename fails otherwise.
/// The caller makes tmp's bytes durable first: nothing is renamed into place before that.
void publish_file(const std::string& tmp, const std::string& target, bool overwrite);

/// True while `path` is a file that a StagedOutputs reserved and has not yet committed or removed.
/// Its writer may then leave durability to StagedOutputs::commit, which syncs every staged file
/// before its first rename; any other file is synced by its writer before publish_file.
bool durable_at_commit(const std::string& path);

/// fdatasync of `path`; FitsError(kOutput) when it cannot be made durable.
void sync_file(const std::string& path);

/// fsync of `path`, a file or (`folder`) a folder whose entries must be durable (a rename or a
/// new file in it); FitsError(kOutput) when it cannot be.
void sync_entry(const std::string& path, bool folder = false);

}  // namespace gpuclean::io

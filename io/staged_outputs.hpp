#pragma once
// All of a run's outputs appear, or none of them. Each output is written under a temporary name
// in its target's folder; commit() renames them all into place once every one is complete; a
// failure before that (a full disk on the last output, an exception anywhere) removes the
// staged files, so a failed run never leaves some outputs as if it had partly succeeded.

#include <string>
#include <utility>
#include <vector>

namespace gpuclean::io {

class StagedOutputs {
 public:
  /// `overwrite`: commit() may replace existing targets (never without it).
  explicit StagedOutputs(bool overwrite) : overwrite_(overwrite) {}
  /// Removes every staged file not yet committed.
  ~StagedOutputs();
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;

  /// Reserves an empty temporary file beside `target` and returns its name: write the output
  /// there, replacing it (the writers' overwrite on). Throws FitsError(kOutput) when the folder
  /// is not writable. Test seam: GPUCLEAN_TEST_FAIL_OUTPUT=NAME makes staging the target whose
  /// file name is NAME fail as a full disk would.
  std::string stage(const std::string& target);

  /// Renames every staged file to its target, in the order staged (the caller stages the file
  /// whose presence means "done" last). If a rename fails, the targets already renamed and the
  /// files still staged are removed, and FitsError is thrown.
  void commit();

 private:
  bool overwrite_;
  std::vector<std::pair<std::string, std::string>> staged_;  // (temporary, target)
};

}  // namespace gpuclean::io

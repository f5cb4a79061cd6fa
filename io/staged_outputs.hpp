#pragma once
// All of a run's outputs appear, or none of them; with MODEL_DATA, the MeasurementSets change
// with them. Each output is written into the run's stage folder beside its target
// (io/stage_folder.hpp); commit() writes the decision (the commit record, synced), then applies
// the MeasurementSet journals and renames every file into place. A failure before the decision
// (a full disk on the last output, an exception anywhere) removes the stage; a process stopped
// after it leaves a record that the next run completes; SIGINT/SIGTERM remove the stage
// (app/stop_signals.hpp) and wait for a commit in progress.

#include <memory>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/stage_folder.hpp"

namespace gpuclean::io {

class StagedOutputs {
 public:
  /// `overwrite`: commit() may replace existing targets (never without it).
  explicit StagedOutputs(bool overwrite) : overwrite_(overwrite) {}
  /// Removes every staged file not yet committed.
  ~StagedOutputs();
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;

  /// Reserves an empty file for `target` in the stage folder of target's folder and returns its
  /// name: write the output there, replacing it. The first stage in a folder removes (or
  /// completes) what stopped runs left there. Throws FitsError(kOutput) when the folder is not
  /// writable. Test seam: GPUCLEAN_TEST_FAIL_OUTPUT=NAME makes staging the target whose file name
  /// is NAME fail as a full disk would.
  std::string stage(const std::string& target);

  /// Reserves the journal `name` of MeasurementSet `ms` in the stage folder of `dir` (the
  /// outputs' folder) and returns its path: the caller writes there what commit() is to apply to
  /// the MS (a registered JournalApplier).
  std::string stage_journal(const std::string& dir, const std::string& name, const std::string& ms);

  /// Syncs every staged file; writes the pointers beside the MSs and the commit record; applies
  /// the journals; renames every staged file to its target, in the order staged (the caller
  /// stages the file whose presence means "done" last); removes the stage. Before the record a
  /// failure removes everything; after it, a failed rename leaves the record for the next run.
  void commit();

 private:
  StageFolder& folder(const std::string& dir);

  bool overwrite_;
  std::vector<std::unique_ptr<StageFolder>> folders_;  // the first is the primary
  std::map<std::string, StageFolder*> by_dir_;
  std::vector<std::pair<std::string, std::string>> staged_;    // (temporary, target)
  std::vector<std::pair<std::string, std::string>> journals_;  // (journal, MS)
};

}  // namespace gpuclean::io

#pragma once
// Where a run's outputs wait until they are all complete: one hidden folder per run and output
// folder, `.gpuclean-stage-<pid>-<random>`, beside the targets (so a rename puts each in place on
// the same filesystem). The run holds a flock on its folder while it lives; the kernel drops it
// when the process ends, kill -9 included, so a folder whose lock can be taken belongs to a run
// that is gone. The next run that stages into the same folder, or `gpuclean image` on start,
// finds such folders and removes them — or completes them, when the stopped run had already
// decided to commit: that decision is the `commit` record in the folder (written and synced
// before the first change anyone can see), which lists the renames and the MeasurementSet
// journals (MODEL_DATA, io/ms/model_journal.hpp) still to apply.

#include <string>
#include <utility>
#include <vector>

namespace gpuclean::io {

class StageFolder {
 public:
  /// Creates and locks a stage folder in `dir`. Throws FitsError(kOutput) naming the folder and
  /// the reason when it cannot be made there.
  explicit StageFolder(const std::string& dir);
  /// Removes the folder and every file still in it (the run failed or was not committed).
  ~StageFolder();
  StageFolder(const StageFolder&) = delete;
  StageFolder& operator=(const StageFolder&) = delete;

  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }
  /// `name` inside the folder.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string dir_, path_;
  int fd_ = -1;  // holds the flock
};

/// The commit record: the run's decision to publish. Renames are (staged file, target), in
/// order; journals are (journal file, MeasurementSet). `primary` is empty in the folder that
/// holds the decision and names it in the others (a run whose outputs span several folders
/// writes the others' records first and the primary's last).
struct CommitRecord {
  std::string primary;
  std::vector<std::pair<std::string, std::string>> renames;
  std::vector<std::pair<std::string, std::string>> journals;
};

/// Lists, in `folder`, the MeasurementSets that are about to get a pointer to it (io/stage_pointer.hpp),
/// synced: a stage removed undecided removes those pointers as well.
void write_pointer_list(const StageFolder& folder, const std::vector<std::string>& ms);

/// Writes `record` as `commit` in `folder` and syncs it and the folder.
void write_commit_record(const StageFolder& folder, const CommitRecord& record);

/// Applies a MeasurementSet journal when a stopped run's commit is completed (registered by the
/// layer that knows MeasurementSets; io itself links no casacore). Returns false when the MS is
/// held by a live run (the stage is then left for later).
using JournalApplier = bool (*)(const std::string& journal, const std::string& ms);
void set_journal_applier(JournalApplier applier);

/// Applies the journals and renames of a committed record, in order, skipping what a previous
/// attempt already did. False when a journal could not be applied yet (MS busy, no applier).
bool complete_commit(const CommitRecord& record);

/// Stage folders in `dir` left by runs that are gone: completed when they hold a commit record
/// (and their MSs can be taken), removed otherwise. Folders of live runs are left alone. Returns
/// one line per folder handled, for the log.
std::vector<std::string> sweep_stopped_runs(const std::string& dir);

/// Completes or removes the stopped run's stage folder `path` (absolute), waiting for its lock
/// while another process handles it. For a run that found a MeasurementSet's pointer to it.
std::string settle_stopped_stage(const std::string& path);

/// The stop handler's work (SIGINT, SIGTERM: app/stop_signals.hpp), from its own thread: waits
/// for a commit in progress to end, then removes every live stage folder of this process and
/// keeps any other from being made or committed. Returns the number of staged files removed.
std::size_t remove_live_stages();

/// Held by a commit from its record to its last rename, so that a stop waits for it.
class CommitGuard {
 public:
  CommitGuard();
  ~CommitGuard();
  CommitGuard(const CommitGuard&) = delete;
  CommitGuard& operator=(const CommitGuard&) = delete;
};

/// Commits this process has finished (each StagedOutputs::commit that published its outputs).
std::size_t commits_done();
void note_commit_done();

/// True once a stop signal has arrived (a commit in progress still finishes).
bool stop_requested();

/// True once a stop has begun (stages may no longer be made or committed).
bool stopping();

}  // namespace gpuclean::io

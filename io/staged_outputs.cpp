#include "io/staged_outputs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_set>

#include "io/fits_error.hpp"
#include "io/publish.hpp"
#include "io/stage_pointer.hpp"
#include "io/test_pause.hpp"

namespace gpuclean::io {
namespace fs = std::filesystem;
namespace {

// The files of every live StagedOutputs (any thread): their writers skip the per-file sync.
std::mutex g_mutex;
std::unordered_set<std::string> g_staged;
std::set<std::string> g_swept;  // folders this process has already swept

void forget(const std::string& tmp) {
  const std::lock_guard lock(g_mutex);
  g_staged.erase(tmp);
}

// fdatasync of every file, from up to 8 threads: the filesystem's journal then commits several
// files' metadata at once. The first failure is rethrown once all threads are done.
void sync_all(const std::vector<std::pair<std::string, std::string>>& files) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&] {
    for (std::size_t i; (i = next++) < files.size();) {
      try {
        sync_file(files[i].first);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < std::min<std::size_t>(8, files.size()); ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

std::string absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

}  // namespace

bool durable_at_commit(const std::string& path) {
  const std::lock_guard lock(g_mutex);
  return g_staged.count(path) > 0;
}

StagedOutputs::~StagedOutputs() {
  for (const auto& s : staged_) forget(s.first);
  // ~StageFolder removes each folder with its files, unless it holds a commit to complete.
}

StageFolder& StagedOutputs::folder(const std::string& dir) {
  const std::string key = absolute(dir.empty() ? "." : dir);
  if (const auto it = by_dir_.find(key); it != by_dir_.end()) return *it->second;
  bool sweep;
  {
    const std::lock_guard lock(g_mutex);
    sweep = g_swept.insert(key).second;
  }
  if (sweep) sweep_stopped_runs(key);
  folders_.push_back(std::make_unique<StageFolder>(key));
  by_dir_[key] = folders_.back().get();
  return *folders_.back();
}

std::string StagedOutputs::stage(const std::string& target) {
  const fs::path t(target);
  if (const char* fail = std::getenv("GPUCLEAN_TEST_FAIL_OUTPUT"); fail && t.filename() == fail) {
    throw FitsError(FitsError::Kind::kOutput,
                    "cannot write '" + target + "': no space left on device (injected by GPUCLEAN_TEST_FAIL_OUTPUT)");
  }
  StageFolder& f = folder(t.parent_path().string());
  const std::string tmp = f.file(t.filename().string());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw FitsError(FitsError::Kind::kOutput, "cannot create a file in '" + f.path() + "': " + std::strerror(errno) +
                                                  ". Check that the folder exists and is writable.");
  }
  ::close(fd);
  {
    const std::lock_guard lock(g_mutex);
    g_staged.insert(tmp);
  }
  staged_.emplace_back(tmp, absolute(target));
  return tmp;
}

std::string StagedOutputs::stage_journal(const std::string& dir, const std::string& name, const std::string& ms) {
  StageFolder& f = folders_.empty() ? folder(dir) : *folders_.front();
  const std::string path = f.file(name);
  journals_.emplace_back(path, absolute(ms));
  return path;
}

// Durability: one fdatasync per staged file here, before the record, instead of an fsync inside
// each writer. The writers have already started each file's writeback (sync_file_range), so the
// writer threads never wait for the disk and these syncs mostly find the bytes written. Measured
// on the 2-core dev machine (ext4 on virtio, 32 x 1024^2 planes staged and committed): 32-41 ms
// with 8 threads of fdatasync, 33-52 ms with syncfs, 36-96 ms one after another.
void StagedOutputs::commit() {
  if (staged_.empty() && journals_.empty()) return;
  test_pause("staged");
  const CommitGuard guard;  // a stop waits for the commit from here to its end
  sync_all(staged_);        // on failure the folders are removed
  sync_all(journals_);
  if (!overwrite_) {  // an existing target refuses the run before anything is decided
    for (const auto& s : staged_) {
      if (fs::exists(s.second))
        throw FitsError(FitsError::Kind::kExists, "'" + s.second + "' exists; give --overwrite to replace it.");
    }
  }
  const std::string primary = folders_.front()->path();
  // The MSs whose pointers follow, so that removing this stage undecided removes them too.
  std::vector<std::string> ms;
  for (const auto& j : journals_) ms.push_back(j.second);
  if (!ms.empty()) write_pointer_list(*folders_.front(), ms);
  for (const auto& j : journals_) write_stage_pointer(j.second, primary);
  CommitRecord record;
  record.renames = staged_;
  record.journals = journals_;
  for (std::size_t i = 1; i < folders_.size(); ++i) {
    CommitRecord part = record;
    part.primary = primary;
    write_commit_record(*folders_[i], part);
  }
  write_commit_record(*folders_.front(), record);  // the decision
  test_pause("decided");
  for (const auto& s : staged_) forget(s.first);
  // From here the run's outputs are published, now or by the next run if this one stops.
  if (!overwrite_ && journals_.empty()) {
    // Without --overwrite a file that appeared meanwhile is never replaced (RENAME_NOREPLACE);
    // the run then publishes nothing: the targets renamed so far and the rest are removed.
    std::size_t done = 0;
    try {
      for (; done < staged_.size(); ++done) publish_file(staged_[done].first, staged_[done].second, false);
    } catch (...) {
      for (std::size_t i = 0; i < done; ++i) ::unlink(staged_[i].second.c_str());
      for (const auto& f : folders_) ::unlink(f->file("commit").c_str());
      staged_.clear();
      throw;
    }
  }
  if (!complete_commit(record))  // only when no applier is registered: the record stays for later
    throw FitsError(FitsError::Kind::kOutput, "the MeasurementSets of this run could not be written; the next "
                                              "gpuclean image run on them completes this commit");
  for (std::size_t i = folders_.size(); i-- > 0;) ::unlink(folders_[i]->file("commit").c_str());
  staged_.clear();
  journals_.clear();
  folders_.clear();  // removes the folders, empty now
  by_dir_.clear();
  note_commit_done();
}

}  // namespace gpuclean::io

#include "io/stage_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "io/fits_error.hpp"
#include "io/publish.hpp"
#include "io/stage_pointer.hpp"
#include "io/test_pause.hpp"

namespace gpuclean::io {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPrefix = ".gpuclean-stage-";
constexpr const char* kRecord = "commit";
constexpr const char* kRecordHeader = "gpuclean-commit 1";

std::mutex g_mutex;                // guards g_live and g_stopping
std::set<const StageFolder*> g_live;
bool g_stopping = false;
std::recursive_mutex g_commit;     // a commit in progress, or a stop
JournalApplier g_applier = nullptr;
std::atomic<bool> g_stop_requested{false};

std::string errno_text() { return std::strerror(errno); }

constexpr const char* kPointers = "pointers";

/// Removes the files of `path` (a stage folder holds no subfolders), then the folder, and the
/// pointers of the MSs it lists that still name it. Returns the number of files removed.
std::size_t remove_folder(const std::string& path) {
  std::size_t files = 0;
  {
    std::ifstream list(path + "/" + kPointers);
    for (std::string ms; std::getline(list, ms);)
      if (read_stage_pointer(ms) == path) remove_stage_pointer(ms);
  }
  if (DIR* d = ::opendir(path.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (::unlink((path + "/" + name).c_str()) == 0) ++files;
    }
    ::closedir(d);
  }
  ::rmdir(path.c_str());
  return files;
}


/// The pid in a stage folder's name (.gpuclean-stage-<pid>-XXXXXX), or 0.
long owner_pid(const std::string& name) {
  return std::strtol(name.c_str() + std::strlen(kPrefix), nullptr, 10);
}

/// Takes the folder's lock without waiting. Where the filesystem has no flock, a folder whose
/// named process is gone counts as free (that fallback cannot see processes of other hosts).
enum class Lock { kTaken, kHeld, kGone };
Lock try_lock(const std::string& path, int& fd, bool wait) {
  fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Lock::kGone;
  if (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0) {
    struct stat st;  // removed by its last handler while we waited
    if (::stat(path.c_str(), &st) != 0) {
      ::close(fd);
      return Lock::kGone;
    }
    return Lock::kTaken;
  }
  if (errno == EWOULDBLOCK) {
    ::close(fd);
    fd = -1;
    return Lock::kHeld;
  }
  const long pid = owner_pid(fs::path(path).filename().string());
  if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return Lock::kTaken;
  ::close(fd);
  fd = -1;
  return Lock::kHeld;
}

bool read_record(const std::string& folder, CommitRecord& record) {
  std::ifstream in(folder + "/" + kRecord);
  std::string line;
  if (!in || !std::getline(in, line) || line != kRecordHeader) return false;
  bool ended = false;
  while (std::getline(in, line)) {
    if (line == "end") {
      ended = true;
      break;
    }
    const std::size_t space = line.find(' '), tab = line.find('\t');
    const std::string key = line.substr(0, space), rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "primary") {
      record.primary = rest;
    } else if ((key == "rename" || key == "journal") && tab != std::string::npos) {
      const std::size_t t = rest.find('\t');
      auto& list = key == "rename" ? record.renames : record.journals;
      list.emplace_back(rest.substr(0, t), rest.substr(t + 1));
    }
  }
  return ended;  // a record cut short was never renamed into place: not a decision
}

/// The folders of a record's staged files other than `primary`.
std::set<std::string> secondaries(const CommitRecord& record, const std::string& primary) {
  std::set<std::string> out;
  for (const auto& r : record.renames) {
    const std::string folder = fs::path(r.first).parent_path().string();
    if (folder != primary) out.insert(folder);
  }
  return out;
}

/// Handles the stopped run's folder `path`, whose lock `fd` this process holds.
std::string settle_locked(const std::string& path, int fd) {
  CommitRecord record;
  std::string line;
  if (!read_record(path, record)) {
    const std::size_t files = remove_folder(path);
    line = "removed " + std::to_string(files) + " staged file(s) of a stopped run (" + path + ")";
  } else if (!record.primary.empty()) {
    // Part of a commit decided in its primary folder, or never decided if that has no record.
    CommitRecord primary;
    if (fs::exists(record.primary) && read_record(record.primary, primary)) {
      ::close(fd);
      return settle_stopped_stage(record.primary);
    }
    const std::size_t files = remove_folder(path);
    line = "removed " + std::to_string(files) + " staged file(s) of a stopped run (" + path + ")";
  } else if (complete_commit(record)) {
    for (const std::string& s : secondaries(record, path)) remove_folder(s);
    remove_folder(path);
    line = "completed the commit of a stopped run: " + std::to_string(record.journals.size()) +
           " MeasurementSet(s) and " + std::to_string(record.renames.size()) + " output(s) (" + path + ")";
  } else {
    line = "left a stopped run's commit for later: its MeasurementSet is in use (" + path + ")";
  }
  ::close(fd);
  return line;
}

}  // namespace

StageFolder::StageFolder(const std::string& dir) : dir_(dir.empty() ? "." : dir) {
  {
    const std::lock_guard lock(g_mutex);
    if (g_stopping) throw FitsError(FitsError::Kind::kOutput, "stopping: no output is staged any more");
  }
  std::string name = dir_ + "/" + kPrefix + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(name.data()))
    throw FitsError(FitsError::Kind::kOutput, "cannot create a folder in '" + dir_ + "': " + errno_text() +
                                                  ". Check that the folder exists and is writable.");
  path_ = name;
  fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ >= 0) ::flock(fd_, LOCK_EX | LOCK_NB);  // without flock the pid in the name tells
  const std::lock_guard lock(g_mutex);
  g_live.insert(this);
}

StageFolder::~StageFolder() {
  {
    const std::lock_guard lock(g_mutex);
    g_live.erase(this);
  }
  if (!path_.empty() && fs::exists(path_)) {
    CommitRecord record;  // a commit that could not finish is left for the next run to complete
    if (!read_record(path_, record)) remove_folder(path_);
  }
  if (fd_ >= 0) ::close(fd_);
}

void write_pointer_list(const StageFolder& folder, const std::vector<std::string>& ms) {
  {
    std::ofstream out(folder.file(kPointers), std::ios::trunc);
    for (const std::string& m : ms) out << m << "\n";
    out.flush();
    if (!out) throw FitsError(FitsError::Kind::kOutput, "cannot write in '" + folder.path() + "'");
  }
  sync_entry(folder.file(kPointers));
}

void write_commit_record(const StageFolder& folder, const CommitRecord& record) {
  const std::string tmp = folder.file(std::string(kRecord) + ".part");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kRecordHeader << "\n";
    if (!record.primary.empty()) out << "primary " << record.primary << "\n";
    for (const auto& r : record.renames) out << "rename " << r.first << "\t" << r.second << "\n";
    for (const auto& j : record.journals) out << "journal " << j.first << "\t" << j.second << "\n";
    out << "end\n";
    out.flush();
    if (!out) throw FitsError(FitsError::Kind::kOutput, "cannot write the commit record in '" + folder.path() + "'");
  }
  sync_entry(tmp);
  if (::rename(tmp.c_str(), folder.file(kRecord).c_str()) != 0)
    throw FitsError(FitsError::Kind::kOutput, "cannot write the commit record in '" + folder.path() + "': " + errno_text());
  sync_entry(folder.path(), true);
}

void set_journal_applier(JournalApplier applier) { g_applier = applier; }

bool complete_commit(const CommitRecord& record) {
  for (const auto& j : record.journals) {
    if (!fs::exists(j.first)) continue;  // applied by an earlier attempt
    if (!g_applier || !g_applier(j.first, j.second)) return false;
    ::unlink(j.first.c_str());
  }
  for (const auto& r : record.renames) {
    if (!fs::exists(r.first)) continue;
    if (::rename(r.first.c_str(), r.second.c_str()) != 0)
      throw FitsError(FitsError::Kind::kOutput, "cannot move the finished file to '" + r.second + "': " + errno_text());
    test_pause("rename");
  }
  for (const auto& j : record.journals) remove_stage_pointer(j.second);
  return true;
}

std::vector<std::string> sweep_stopped_runs(const std::string& dir) {
  std::vector<std::string> lines;
  const fs::path base = fs::absolute(dir.empty() ? "." : dir).lexically_normal();
  DIR* d = ::opendir(base.c_str());
  if (!d) return lines;
  std::vector<std::string> found;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(kPrefix, 0) == 0) found.push_back((base / name).string());
  }
  ::closedir(d);
  for (const std::string& path : found) {
    int fd = -1;
    if (!fs::is_directory(path) || try_lock(path, fd, false) != Lock::kTaken) continue;
    lines.push_back(settle_locked(path, fd));
  }
  return lines;
}

std::string settle_stopped_stage(const std::string& path) {
  int fd = -1;
  switch (try_lock(path, fd, true)) {
    case Lock::kGone: return "a stopped run's stage was already settled (" + path + ")";
    case Lock::kHeld: return "a stopped run's stage is held by a live process (" + path + ")";
    case Lock::kTaken: break;
  }
  return settle_locked(path, fd);
}

std::size_t remove_live_stages() {
  g_stop_requested = true;
  const std::lock_guard commit(g_commit);
  const std::lock_guard lock(g_mutex);
  g_stopping = true;
  std::size_t files = 0;
  for (const StageFolder* f : g_live) {
    CommitRecord record;
    if (!read_record(f->path(), record)) files += remove_folder(f->path());
  }
  return files;
}

CommitGuard::CommitGuard() {
  g_commit.lock();
  const std::lock_guard lock(g_mutex);
  if (g_stopping) {
    g_commit.unlock();
    throw FitsError(FitsError::Kind::kOutput, "stopping: the outputs are not committed");
  }
}

CommitGuard::~CommitGuard() { g_commit.unlock(); }

namespace {
std::atomic<std::size_t> g_commits{0};
}  // namespace

std::size_t commits_done() { return g_commits.load(); }
void note_commit_done() { ++g_commits; }

bool stop_requested() { return g_stop_requested.load(); }

bool stopping() {
  const std::lock_guard lock(g_mutex);
  return g_stopping;
}

}  // namespace gpuclean::io

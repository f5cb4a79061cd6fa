#include "io/ms/ms_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "io/ms/ms_error.hpp"

namespace gpuclean::io::ms {
namespace {

std::mutex g_mutex;
std::set<std::string> g_held;

std::string key_of(const std::string& ms) {
  std::error_code error;
  const std::filesystem::path p = std::filesystem::weakly_canonical(ms, error);
  return error ? ms : p.string();
}

}  // namespace

MsWriteLock::MsWriteLock(const std::string& ms) : key_(key_of(ms)) {
  {
    const std::lock_guard lock(g_mutex);
    if (g_held.count(key_)) return;  // the same MS named twice: the first holds it
  }
  fd_ = ::open(key_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0)
    throw MsError(MsError::Kind::kNotMs, "cannot open the MeasurementSet " + ms + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      ::close(fd_);
      throw MsError(MsError::Kind::kBusy,
                    "the MeasurementSet " + ms + " is being imaged by another gpuclean run that will write its " +
                        "MODEL_DATA; wait for it to end, or give -no-update-model-required to only read it");
    }
    return;  // no flock on this filesystem: unlocked, as WSClean always is
  }
  locked_ = true;
  const std::lock_guard lock(g_mutex);
  g_held.insert(key_);
}

MsWriteLock::~MsWriteLock() {
  if (locked_) {
    const std::lock_guard lock(g_mutex);
    g_held.erase(key_);
  }
  if (fd_ >= 0) ::close(fd_);
}

bool holds_ms_lock(const std::string& ms) {
  const std::lock_guard lock(g_mutex);
  return g_held.count(key_of(ms)) > 0;
}

}  // namespace gpuclean::io::ms

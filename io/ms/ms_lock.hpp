#pragma once
// One writer per MeasurementSet: a run that will write MODEL_DATA holds a flock on the MS's
// folder from before it reads until its commit is done. A second such run on the same MS is
// refused at once (MsError kBusy, exit 6) instead of racing the first for MODEL_DATA. The lock
// lives in the kernel, not in a file: nothing is left behind by a run that is killed. Runs that
// only read the MS take no lock (casacore's table locks keep their reads consistent).

#include <string>

namespace gpuclean::io::ms {

class MsWriteLock {
 public:
  /// Takes the lock of `ms` without waiting. Throws MsError kBusy when another process holds it,
  /// kNotMs when the MS cannot be opened. On filesystems without flock (some NFS mounts) the run
  /// goes on unlocked and `locked()` is false.
  explicit MsWriteLock(const std::string& ms);
  ~MsWriteLock();
  MsWriteLock(const MsWriteLock&) = delete;
  MsWriteLock& operator=(const MsWriteLock&) = delete;
  bool locked() const { return locked_; }

 private:
  std::string key_;
  int fd_ = -1;
  bool locked_ = false;
};

/// True while this process holds `ms`'s lock.
bool holds_ms_lock(const std::string& ms);

}  // namespace gpuclean::io::ms

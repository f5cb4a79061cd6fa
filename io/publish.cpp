#include "io/publish.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/fits_error.hpp"

namespace gpuclean::io {
namespace fs = std::filesystem;
constexpr auto kOutput = FitsError::Kind::kOutput;

void publish_file(const std::string& tmp, const std::string& target, bool overwrite) {
  if (overwrite) {
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      throw FitsError(kOutput, "cannot move the finished file to '" + target + "': " + std::strerror(errno));
    }
    return;
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) return;
  if (errno == EEXIST) {
    throw FitsError(FitsError::Kind::kExists,
                    "'" + target + "' appeared while gpuclean was writing it; it was left alone. Give --overwrite to replace it.");
  }
  if (errno != EINVAL && errno != ENOSYS) {
    throw FitsError(kOutput, "cannot move the finished file to '" + target + "': " + std::strerror(errno));
  }
  // Filesystems without RENAME_NOREPLACE: check, then rename.
  if (fs::exists(target)) {
    throw FitsError(FitsError::Kind::kExists, "'" + target + "' exists; give --overwrite to replace it.");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    throw FitsError(kOutput, "cannot move the finished file to '" + target + "': " + std::strerror(errno));
  }
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fdatasync(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw FitsError(kOutput, "cannot make '" + path + "' durable: " + why + ". Check the disk.");
  }
  ::close(fd);
}

void sync_entry(const std::string& path, bool folder) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (folder ? O_DIRECTORY : 0));
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw FitsError(kOutput, "cannot make '" + path + "' durable: " + why + ". Check the disk.");
  }
  ::close(fd);
}

}  // namespace gpuclean::io

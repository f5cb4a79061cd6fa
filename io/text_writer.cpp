#include "io/text_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/fits_error.hpp"
#include "io/publish.hpp"

namespace gpuclean::io {

void write_text_file(const std::string& path, const std::string& content, bool overwrite) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!overwrite && fs::exists(path, ec)) {
    throw FitsError(FitsError::Kind::kExists,
                    "output '" + path + "' already exists. Give --overwrite to replace it, or choose another name.");
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::string tmp = (dir / ("." + fs::path(path).filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    throw FitsError(FitsError::Kind::kOutput, "cannot write in '" + dir.string() + "': " + std::strerror(errno));
  }
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw FitsError(FitsError::Kind::kOutput, "cannot write '" + path + "': " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::fchmod(fd, 0644);
  ::close(fd);
  try {
    publish_file(tmp, path, overwrite);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace gpuclean::io

#include "io/staged_outputs.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "io/fits_error.hpp"
#include "io/publish.hpp"

namespace gpuclean::io {
namespace fs = std::filesystem;

StagedOutputs::~StagedOutputs() {
  for (const auto& s : staged_) ::unlink(s.first.c_str());
}

std::string StagedOutputs::stage(const std::string& target) {
  const fs::path t(target);
  if (const char* fail = std::getenv("GPUCLEAN_TEST_FAIL_OUTPUT"); fail && t.filename() == fail) {
    throw FitsError(FitsError::Kind::kOutput,
                    "cannot write '" + target + "': no space left on device (injected by GPUCLEAN_TEST_FAIL_OUTPUT)");
  }
  fs::path dir = t.parent_path();
  if (dir.empty()) dir = ".";
  std::string tmp = (dir / ('.' + t.filename().string())).string();
  tmp += ".stage-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    throw FitsError(FitsError::Kind::kOutput, "cannot create a file in '" + dir.string() + "': " +
                                                  std::strerror(errno) + ". Check that the folder exists and is writable.");
  }
  ::close(fd);
  staged_.emplace_back(tmp, target);
  return tmp;
}

void StagedOutputs::commit() {
  std::size_t done = 0;
  try {
    for (; done < staged_.size(); ++done) publish_file(staged_[done].first, staged_[done].second, overwrite_);
  } catch (...) {
    for (std::size_t i = 0; i < done; ++i) ::unlink(staged_[i].second.c_str());
    staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(done));
    throw;  // the destructor removes the rest
  }
  staged_.clear();
}

}  // namespace gpuclean::io

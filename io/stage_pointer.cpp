#include "io/stage_pointer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/fits_error.hpp"
#include "io/publish.hpp"

namespace gpuclean::io {
namespace fs = std::filesystem;

std::string stage_pointer_path(const std::string& ms) {
  fs::path p = fs::absolute(ms).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "x.ms/"
  return (p.parent_path() / ("." + p.filename().string() + ".gpuclean-commit")).string();
}

void write_stage_pointer(const std::string& ms, const std::string& stage) {
  const std::string path = stage_pointer_path(ms);
  {
    std::ofstream out(path, std::ios::trunc);
    out << stage << "\n";
    out.flush();
    if (!out)
      throw FitsError(FitsError::Kind::kOutput, "cannot write '" + path + "' beside the MeasurementSet " + ms +
                                                    ": " + std::strerror(errno) + ". The MS's folder must be writable.");
  }
  sync_entry(path);
  sync_entry(fs::path(path).parent_path().string(), true);
}

std::optional<std::string> read_stage_pointer(const std::string& ms) {
  std::ifstream in(stage_pointer_path(ms));
  std::string stage;
  if (!in || !std::getline(in, stage) || stage.empty()) return std::nullopt;
  return stage;
}

void remove_stage_pointer(const std::string& ms) { ::unlink(stage_pointer_path(ms).c_str()); }

}  // namespace gpuclean::io

#pragma once
// Runs a shell command as users do, with stdout and stderr captured into files in a TempDir.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/paths.hpp"
#include "tests/support/temp_dir.hpp"

namespace gpuclean::test {

struct CommandResult {
  int code;  ///< exit status, -1 when killed by a signal
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

inline CommandResult run_command(const TempDir& dir, const std::string& command) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const int status = std::system((command + " >" + out + " 2>" + err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

/// The gpuclean binary with these arguments.
inline CommandResult run_gpuclean(const TempDir& dir, const std::string& args) {
  return run_command(dir, binary_path() + " " + args);
}

}  // namespace gpuclean::test

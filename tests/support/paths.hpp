#pragma once
// Paths the tests need. Compiled-in defaults point at this checkout; the environment variables
// GPUCLEAN_BINARY, GPUCLEAN_SOURCE_DIR and GPUCLEAN_SHARED_DIR override them, so the built tests
// can run from another place (such as a GPU machine that receives only the binaries).

#include <cstdlib>
#include <string>

namespace gpuclean::test {

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
inline std::string binary_path() { return env_or("GPUCLEAN_BINARY", GPUCLEAN_BINARY); }
inline std::string source_dir() { return env_or("GPUCLEAN_SOURCE_DIR", GPUCLEAN_SOURCE_DIR); }
inline std::string shared_dir() { return env_or("GPUCLEAN_SHARED_DIR", GPUCLEAN_SHARED_DIR); }

}  // namespace gpuclean::test

#include "io/test_pause.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io/stage_folder.hpp"

namespace gpuclean::io {

void test_pause(const char* phase) {
  const char* at = std::getenv("GPUCLEAN_TEST_PAUSE_AT");
  if (!at || std::strcmp(at, phase) != 0) return;
  std::fprintf(stderr, "gpuclean: paused at %s (GPUCLEAN_TEST_PAUSE_AT)\n", phase);
  std::fflush(stderr);
  // Until a stop signal, the file GPUCLEAN_TEST_RESUME (when given) appears, or a minute passes.
  const char* resume = std::getenv("GPUCLEAN_TEST_RESUME");
  for (int i = 0; i < 600 && !stop_requested() && !(resume && ::access(resume, F_OK) == 0); ++i) ::usleep(100000);
}

}  // namespace gpuclean::io

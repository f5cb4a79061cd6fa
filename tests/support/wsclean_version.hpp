#pragma once
// The version of the wsclean on PATH, for tests that compare with what WSClean 3.1 writes
// byte for byte (header cards, source lists): gpuclean image follows 3.1, and later versions
// write other cards (3.6 in the trixie stage leaves WSCTHRES out with -auto-threshold alone).
#include <cstdio>
#include <stdexcept>
#include <string>

#include "tests/support/run_command.hpp"

namespace gpuclean::test {

/// major * 100 + minor, e.g. 301 for 3.1; read once.
inline int wsclean_version() {
  static const int version = [] {
    const TempDir dir;
    const CommandResult r = run_command(dir, "wsclean --version");
    int major = 0, minor = 0;
    const std::size_t at = r.out.find("version ");
    if (at == std::string::npos || std::sscanf(r.out.c_str() + at, "version %d.%d", &major, &minor) != 2)
      throw std::runtime_error("cannot read WSClean's version from: " + r.out + r.err);
    return major * 100 + minor;
  }();
  return version;
}

}  // namespace gpuclean::test

/// In a test that checks WSClean 3.1's exact output: skips, saying why, with another WSClean.
#define SKIP_UNLESS_WSCLEAN_31()                                                                     \
  if (const int v = ::gpuclean::test::wsclean_version(); v != 301)                                   \
  GTEST_SKIP() << "compares with WSClean 3.1's exact files; the wsclean on PATH is " << v / 100 << "." \
               << v % 100 << ", which writes other cards (gpuclean image follows 3.1)"

#pragma once
// A small simulated observation (128^2, 8 sources, seed 3), made once per test suite by
// `gpuclean simulate` as a user would, for the tests that run the binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace gpuclean::test {

/// Lines in a command's output (an error must be exactly one).
inline int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

class SimulatedPairTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const CommandResult r = run_gpuclean(*dir_, "simulate --size 128 --sources 8 --seed 3 --out " + dir_->file("sim"));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string dirty() { return dir_->file("sim/dirty.fits"); }
  static std::string psf() { return dir_->file("sim/psf.fits"); }
  inline static TempDir* dir_ = nullptr;
  TempDir tmp_;  ///< this test's own folder
};

}  // namespace gpuclean::test

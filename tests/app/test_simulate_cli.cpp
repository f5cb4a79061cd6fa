// `gpuclean simulate --channels N`: the WSClean-style channel set, and its settings refused
// before any work with one line and exit code 2.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/fits_reader.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/simulated_pair.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using gpuclean::test::count_lines;
using gpuclean::test::run_gpuclean;

TEST(SimulateCli, ChannelsWriteAWscleanChannelSet) {
  gpuclean::test::TempDir tmp;
  const std::string dir = tmp.file("cube");
  const auto r = run_gpuclean(tmp, "simulate --channels 4 --bandwidth 2e8 --size 64 --name field --out " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("4 channels"), std::string::npos) << r.out;
  for (const char* name : {"field-0000-dirty.fits", "field-0003-psf.fits", "field-MFS-dirty.fits",
                           "field-MFS-psf.fits", "truth-0003.fits", "sources.csv"})
    EXPECT_TRUE(fs::exists(dir + "/" + name)) << name;
  EXPECT_FALSE(fs::exists(dir + "/dirty.fits"));
  EXPECT_FALSE(fs::exists(dir + "/field-0004-dirty.fits"));
}

TEST(SimulateCli, ChannelSettingsAreCheckedBeforeAnyWork) {
  gpuclean::test::TempDir tmp;
  const std::string d = tmp.file("out");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"simulate --size 64 --channels 4 --out " + d, "--bandwidth"},
      {"simulate --size 64 --channels 4 --bandwidth 3e9 --out " + d, "--bandwidth"},
      {"simulate --size 64 --bandwidth 2e8 --out " + d, "--channels"},
      {"simulate --size 64 --channels 2000 --bandwidth 2e8 --out " + d, "--channels"},
      {"simulate --size 64 --channels 4 --bandwidth 2e8 --spectral-index 1 -1 --out " + d, "--spectral-index"},
      {"simulate --size 64 --channels 4 --bandwidth 2e8 --name a/b --out " + d, "--name"},
      {"simulate --size 64 --channels 4 --bandwidth 2e8 --threads 5000 --out " + d, "--threads"},
  };
  for (const auto& [args, option] : cases) {
    SCOPED_TRACE(args);
    const auto r = run_gpuclean(tmp, args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d));
  }
}

TEST(SimulateCli, ThreadsDoNotChangeTheImages) {
  gpuclean::test::TempDir tmp;
  for (const char* threads : {"1", "3"}) {
    const auto r = run_gpuclean(tmp, std::string("simulate --channels 4 --bandwidth 2e8 --size 64 --threads ") + threads +
                                         " --out " + tmp.file(std::string("t") + threads));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  for (const char* name : {"sim-0000-dirty.fits", "sim-0003-dirty.fits", "sim-0002-psf.fits", "sim-MFS-dirty.fits",
                           "truth-0001.fits"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(gpuclean::io::read_fits_image(tmp.file(std::string("t3/") + name)).pixels,
              gpuclean::io::read_fits_image(tmp.file(std::string("t1/") + name)).pixels);
  }
}

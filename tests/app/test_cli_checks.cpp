// Bad input and settings found by trying gpuclean as a new user would (issue 13): each is one
// line on stderr with its documented exit code, before any work, and a failed run leaves none
// of its outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/fits_reader.hpp"
#include "tests/io/fits_test_files.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/simulated_pair.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using Result = gpuclean::test::CommandResult;
using gpuclean::test::run_gpuclean;
using gpuclean::test::slurp;

using gpuclean::test::count_lines;

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

class CliChecks : public gpuclean::test::SimulatedPairTest {
 protected:
  std::string pair() const { return dirty() + " " + psf() + " -o " + tmp_.file("out/img.fits"); }
  void SetUp() override { fs::create_directories(tmp_.path() / "out"); }

  // The PSF with every pixel passed through `f(x, y, v)`, written as a plain FITS file.
  template <class F>
  std::string altered_psf(const std::string& name, F f) const {
    const auto p = gpuclean::io::read_fits_image(psf());
    std::vector<double> v(p.pixels.size());
    for (std::size_t y = 0; y < p.height; ++y)
      for (std::size_t x = 0; x < p.width; ++x) v[y * p.width + x] = f(x, y, p.pixels, p.width);
    gpuclean::test::RawFitsSpec spec;
    spec.axes = {static_cast<long>(p.width), static_cast<long>(p.height)};
    gpuclean::test::write_raw_fits(tmp_.file(name), spec, v);
    return tmp_.file(name);
  }
};

}  // namespace

// Issue 13.1: --select was checked on the GPU path only.
TEST_F(CliChecks, UnknownSelectBackendIsRefusedOnTheCpuPathToo) {
  const Result r = run_gpuclean(tmp_, pair() + " --device cpu --select no-such-backend");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--select no-such-backend is not a selection backend"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cutting-plane"), std::string::npos) << r.err;  // the valid names
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(entries(tmp_.path() / "out"), 0u);
  // Every GPU backend's name is valid in every build: a CPU run accepts it (and has no use for it).
  const Result ok = run_gpuclean(tmp_, pair() + " --device cpu --select sample -q");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// Issue 13.2: "-1" was read as 2^64 - 1 by every unsigned option.
TEST_F(CliChecks, NegativeCountsAreUsageErrors) {
  const std::string d = tmp_.file("out");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {pair() + " --niter -1", "--niter"},
      {pair() + " --select-k -1", "--select-k"},
      {pair() + " --beam-patch -1", "--beam-patch"},
      {pair() + " --threads -1", "--threads"},
      {"batch " + d + " --max-gpus -1", "--max-gpus"},
      {"batch " + d + " --io-threads -1", "--io-threads"},
      {"batch " + d + " --streams-per-gpu -1", "--streams-per-gpu"},
      {"batch " + d + " --queue -1", "--queue"},
      {"batch " + d + " --niter -1", "--niter"},
      {"simulate --size -64 --out " + d, "--size"},
      {"simulate --size 64 --sources -1 --out " + d, "--sources"},
      {"simulate --size 64 --gaussians -1 --out " + d, "--gaussians"},
      {"simulate --size 64 --seed -1 --out " + d, "--seed"},
      {"bench clean --sizes 64,-1", "--sizes"},
      {"bench clean --niters -1", "--niters"},
      {"bench clean --cpu-max-size -1", "--cpu-max-size"},
      {"bench clean --cli-size -1", "--cli-size"},
      {"bench batch --size -1", "--size"},
      {"bench batch --counts 4,-1", "--counts"},
      {"bench batch --sources -1", "--sources"},
      {"bench select --sizes -1", "--sizes"},
      {"bench select --ks -1", "--ks"},
  };
  for (const auto& [args, option] : cases) {
    SCOPED_TRACE(args);
    const Result r = run_gpuclean(tmp_, args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
  }
  EXPECT_EQ(entries(tmp_.path() / "out"), 0u);
}

TEST_F(CliChecks, NegativeCountInAManifestRowStopsTheBatch) {
  std::ofstream(tmp_.file("m.csv")) << "dirty,psf,out,niter\n" << dirty() << "," << psf() << ",out/a.fits,-1\n";
  const Result r = run_gpuclean(tmp_, "batch " + tmp_.file("m.csv"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("line 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("negative"), std::string::npos) << r.err;
  EXPECT_EQ(entries(tmp_.path() / "out"), 0u);
}

// Issue 13.3: a negated PSF's largest positive sidelobe was taken for its peak.
TEST_F(CliChecks, NegatedPsfIsBadInputUnlessUnchecked) {
  const std::string negated =
      altered_psf("neg.fits", [](std::size_t x, std::size_t y, const std::vector<float>& p, std::size_t w) {
        return -static_cast<double>(p[y * w + x]);
      });
  const Result r = run_gpuclean(tmp_, dirty() + " " + negated + " -o " + tmp_.file("out/img.fits"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("negated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--psf-unchecked"), std::string::npos) << r.err;
  EXPECT_EQ(entries(tmp_.path() / "out"), 0u);
  const Result forced = run_gpuclean(tmp_, dirty() + " " + negated + " -o " + tmp_.file("out/img.fits") +
                                               " --psf-unchecked --niter 10 --device cpu");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.err.find("normalised"), std::string::npos) << forced.err;  // the warning stays
}

TEST_F(CliChecks, PsfPeakFarFromTheCentreIsBadInputUnlessUnchecked) {
  // The PSF moved 20 pixels right (wrapped): its peak is nowhere near (64, 64) or CRPIX.
  const std::string shifted =
      altered_psf("shift.fits", [](std::size_t x, std::size_t y, const std::vector<float>& p, std::size_t w) {
        return static_cast<double>(p[y * w + (x + w - 20) % w]);
      });
  const Result r = run_gpuclean(tmp_, dirty() + " " + shifted + " -o " + tmp_.file("out/img.fits"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("far from its centre"), std::string::npos) << r.err;
  const Result forced = run_gpuclean(tmp_, dirty() + " " + shifted + " -o " + tmp_.file("out/img.fits") +
                                               " --psf-unchecked --niter 10 --device cpu");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.err.find("not at the centre"), std::string::npos) << forced.err;
}

// Issue 13.4: a header claiming 2^31 - 1 pixels a row in a 16 KB file ended in "out of host memory".
TEST_F(CliChecks, HeaderClaimingMoreDataThanTheFileHoldsIsBadInput) {
  gpuclean::test::RawFitsSpec spec;
  spec.axes = {60, 60};
  gpuclean::test::write_raw_fits(tmp_.file("liar.fits"), spec, std::vector<double>(60 * 60, 1.0));
  std::string bytes = slurp(tmp_.file("liar.fits"));
  const std::size_t at = bytes.find("NAXIS1  = ");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at + 10, 20, "          2147483647");  // the value field, right-justified
  std::ofstream(tmp_.file("liar.fits"), std::ios::binary | std::ios::trunc) << bytes;
  ASSERT_LT(fs::file_size(tmp_.file("liar.fits")), 20000u);
  const Result r = run_gpuclean(tmp_, tmp_.file("liar.fits") + " " + psf() + " -o " + tmp_.file("out/img.fits"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("truncated or its header is wrong"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("memory"), std::string::npos) << r.err;
}

TEST_F(CliChecks, TruncatedCopyIsBadInput) {
  fs::copy_file(dirty(), tmp_.file("cut.fits"));
  fs::resize_file(tmp_.file("cut.fits"), fs::file_size(dirty()) / 2);
  const Result r = run_gpuclean(tmp_, tmp_.file("cut.fits") + " " + psf() + " -o " + tmp_.file("out/img.fits"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
}

// Issue 13.5: when the restored image could not be written, the model and residual stayed.
TEST_F(CliChecks, FailureOnTheLastOutputLeavesNoneOfTheRunsOutputs) {
  const std::string out = tmp_.file("out/");
  const std::string args = pair() + " --model " + out + "model.fits --residual " + out + "res.fits --components " +
                           out + "c.csv --json " + out + "s.json --device cpu --niter 50";
  const Result r = gpuclean::test::run_command(
      tmp_, "GPUCLEAN_TEST_FAIL_OUTPUT=img.fits " + gpuclean::test::binary_path() + " " + args);
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("img.fits"), std::string::npos) << r.err;
  std::string left;
  for (const auto& e : fs::directory_iterator(tmp_.path() / "out")) left += e.path().filename().string() + " ";
  EXPECT_TRUE(left.empty()) << "left behind: " << left;
  // The same run without the failure writes all of them.
  const Result ok = run_gpuclean(tmp_, args + " -q");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(entries(tmp_.path() / "out"), 5u);
}

// Issue 13.8: --threshold alone now rules, as in WSClean; the rules in force are printed.
TEST_F(CliChecks, ThresholdAloneTurnsTheAutoThresholdOff) {
  const auto settings = [&](const std::string& extra, std::string* out) {
    const Result r = run_gpuclean(tmp_, pair() + " --overwrite --device cpu --json " + tmp_.file("s.json") + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    *out = r.out;
    return nlohmann::json::parse(slurp(tmp_.file("s.json")))["settings"];
  };
  std::string log;
  auto s = settings(" --threshold 0.002", &log);
  EXPECT_EQ(s["auto_threshold"].get<double>(), 0.0);
  EXPECT_EQ(s["stopping_rules"], "--threshold 0.002; auto-threshold off; --niter 100000; divergence");
  EXPECT_NE(log.find("stopping rules: --threshold 0.002; auto-threshold off"), std::string::npos) << log;
  s = settings(" --threshold 0.002 --auto-threshold 3", &log);
  EXPECT_EQ(s["auto_threshold"].get<double>(), 3.0);
  EXPECT_NE(log.find("stopping rules: --threshold 0.002; --auto-threshold 3"), std::string::npos) << log;
  s = settings("", &log);
  EXPECT_EQ(s["auto_threshold"].get<double>(), 3.0);  // neither given: the default 3 sigma
  EXPECT_NE(log.find("stopping rules: no absolute threshold; --auto-threshold 3"), std::string::npos) << log;
}

TEST_F(CliChecks, ThresholdRuleHoldsPerManifestRow) {
  std::ofstream(tmp_.file("m.csv")) << "name,dirty,psf,out,threshold,auto-threshold,json\n"
                                    << "a," << dirty() << "," << psf() << ",out/a.fits,0.002,,a.json\n"
                                    << "b," << dirty() << "," << psf() << ",out/b.fits,0.002,3,b.json\n"
                                    << "c," << dirty() << "," << psf() << ",out/c.fits,,,c.json\n";
  const Result r = run_gpuclean(tmp_, "batch " + tmp_.file("m.csv") + " -q --device cpu");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto auto_of = [&](const char* name) {
    return nlohmann::json::parse(slurp(tmp_.file(name)))["settings"]["auto_threshold"].get<double>();
  };
  EXPECT_EQ(auto_of("a.json"), 0.0);
  EXPECT_EQ(auto_of("b.json"), 3.0);
  EXPECT_EQ(auto_of("c.json"), 3.0);
}

// Issue 46: `gpuclean image` checks every option, combination of options, input path and output
// folder before the first visibility is read. The binary (GPUCLEAN_BINARY, the CPU path) is run on
// an MS large enough that reading it takes clearly longer than a refusal may (860 MB: 64 antennas,
// 3 h of 30 s, 64 channels), made once for the table of cases and removed after. Each refusal must
// come in under a second, as one line on stderr that names the cause, with the exit code of
// docs/cli.md; nothing is written and the MS is left as it was. A refusal that can only come after
// the read (every sample outside -minuv-l) is the control: it takes longer than any of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/image/image_args.hpp"
#include "app/image/image_outputs.hpp"
#include "clean/errors.hpp"
#include "io/fits_writer.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

constexpr double kMostSeconds = 1.0;  // a refusal before the read
// -interval and -intervals-out count the MS's timesteps from its TIME column, as WSClean does. The
// simulator keeps TIME in the same StandardStMan as DATA, so reading it reads the file's buckets
// (860 MB here): 0.2 s warm, 1.95 s measured once in CI with other tests beside it. They must
// still refuse long before a run that reads the visibilities would (the control below).
constexpr double kTimeColumnSeconds = 4.0;

/// The MS's files with their sizes and modification times: equal before and after a refused run.
std::string fingerprint(const std::string& ms) {
  std::vector<std::string> lines;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(ms)) {
    std::string line = fs::relative(e.path(), ms).string();
    if (e.is_regular_file())
      line += " " + std::to_string(e.file_size()) + " " +
              std::to_string(e.last_write_time().time_since_epoch().count());
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return all;
}

std::vector<std::string> entries(const std::string& folder) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
  return names;
}

/// A FITS image of `size` x `size` zeros at 4″ on the MS's phase centre (simulate_ms.py's default).
void write_fits(const std::string& path, std::size_t size) {
  const std::vector<float> pixels(size * size, 0.0f);
  io::FitsHeader h;
  h.set_double("CRPIX1", static_cast<double>(size / 2 + 1));
  h.set_double("CRVAL1", 53.0);
  h.set_double("CDELT1", -4.0 / 3600);
  h.set_double("CRPIX2", static_cast<double>(size / 2 + 1));
  h.set_double("CRVAL2", -28.0);
  h.set_double("CDELT2", 4.0 / 3600);
  io::write_fits_image(path, pixels.data(), size, size, h, {static_cast<long>(size), static_cast<long>(size), 1, 1},
                       io::WriteOptions{});
}

struct Case;
Case time_column(Case c);

struct Case {
  Case(std::string a, int c, std::vector<std::string> s, std::string e = "")
      : args(std::move(a)), code(c), says(std::move(s)), env(std::move(e)) {}
  std::string args;               ///< after "image"; {ms}, {out} (the output prefix) and {dir} replaced
  int code;                       ///< the exit code
  std::vector<std::string> says;  ///< parts of the one stderr line (exit 0: of stdout)
  std::string env;                ///< an environment prefix (the host memory seam)
  double most_seconds = kMostSeconds;
};

/// A case whose check reads the TIME column (kTimeColumnSeconds).
Case time_column(Case c) {
  c.most_seconds = kTimeColumnSeconds;
  return c;
}

std::string replaced(std::string text, const std::string& key, const std::string& value) {
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

TEST(ImageChecksFirst, EveryRefusalComesBeforeTheRead) {
  TempDir dir;
  const std::string ms = dir.file("big.ms");
  const auto made = std::chrono::steady_clock::now();
  test::run_python(dir, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                            " --sky single --antennas 64 --hours 3 --integration 30 --channels 64 --noise 0");
  std::printf("made %s in %.1f s\n", ms.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - made).count());
  const std::string out = dir.file("out");
  fs::create_directory(out);
  std::ofstream(dir.file("afile")) << "not a folder";
  write_fits(dir.file("small.fits"), 32);
  write_fits(dir.file("m-model.fits"), 128);  // -predict's NAME-model.fits for -name {dir}/m

  const std::string base = "-size 256 256 -scale 4asec -device cpu ";
  const std::string o = base + "-name {out} ";
  const std::vector<Case> cases = {
      // -fit-spectral-pol over fewer planes than terms: WSClean 3.1 runs it, fitting as many terms
      // as planes; so does gpuclean, saying so before the read (-dry-run: every check, no read).
      {o + "-niter 100 -mgain 0.8 -fit-spectral-pol 4 -channels-out 2 -join-channels -dry-run {ms}", 0,
       {"-fit-spectral-pol 4 over 2 joined channels: 2 terms are fitted and the others are 0"}},
      {o + "-niter 100 -fit-spectral-log-pol 5 -channels-out 8 -deconvolution-channels 3 -join-channels -dry-run {ms}",
       0, {"-fit-spectral-log-pol 5 over 3 deconvolution channels: 3 terms are fitted"}},
      {o + "-dry-run {ms}", 0, {"-dry-run: the options, 1 MS and the outputs' folder checked"}},
      // Options and their combinations (exit 2).
      {o + "-niter 10 -fit-spectral-pol 2 -channels-out 2 {ms}", 2, {"-fit-spectral-pol", "add -join-channels"}},
      {o + "-niter 10 -fit-spectral-log-pol 7 -channels-out 8 -join-channels {ms}", 2,
       {"-fit-spectral-log-pol takes at most 6 terms"}},
      {o + "-niter 10 -fit-spectral-pol 2 -fit-spectral-log-pol 2 -channels-out 2 -join-channels {ms}", 2,
       {"two forms of one fit"}},
      {o + "-niter 10 -channels-out 4 -deconvolution-channels 2 -join-channels {ms}", 2,
       {"-deconvolution-channels 2 < -channels-out 4 needs a spectral fit"}},
      {o + "-niter 10 -channels-out 4 -deconvolution-channels 5 -join-channels -fit-spectral-pol 2 {ms}", 2,
       {"-deconvolution-channels 5 is more than -channels-out 4"}},
      {o + "-niter 10 -join-channels -channels-out 1 {ms}", 2, {"-join-channels with -channels-out 1"}},
      {o + "-niter 10 -mgain 0 {ms}", 2, {"-mgain 0 must be in (0, 1]"}},
      {o + "-niter 10 -save-source-list -pol xx {ms}", 2, {"-save-source-list works for Stokes I only"}},
      {o + "-niter 10 -save-source-list -channels-out 2 -join-channels {ms}", 2,
       {"-save-source-list with -channels-out > 1 -join-channels needs a spectral fit"}},
      {o + "-save-source-list {ms}", 2, {"-save-source-list needs -niter > 0"}},
      {o + "-niter 10 -auto-mask 2 -auto-threshold 3 {ms}", 2, {"-auto-mask must exceed -auto-threshold"}},
      {o + "-niter 10 -no-fit-beam {ms}", 2, {"-no-fit-beam"}},
      {"-size 2048 2048 -scale 0.1deg -device cpu -name {out} {ms}", 2,
       {"-size 2048 2048 at -scale 360asec", "past the horizon", "give a smaller -size or -scale"}},
      {"-size 100000 100000 -scale 4asec -device cpu -name {out} {ms}", 2, {"-size 100000 100000", "past the horizon"}},
      {o + "-temp-dir /proc/self {ms}", 2, {"-temp-dir /proc/self cannot take a file"}},
      {o + "-temp-dir {dir}/missing {ms}", 2, {"missing does not exist"}},
      // The options against the MS: its metadata only (exit 2 for a count, 3 for what the MS lacks).
      {o + "-channels-out 100 {ms}", 2, {"-channels-out 100 is more than the 64 selected channels"}},
      {o + "-channel-division-frequencies 1e9,1e12 -channels-out 2 {ms}", 2, {"-channel-division-frequencies"}},
      time_column({o + "-intervals-out 1000 {ms}", 2, {"-intervals-out 1000 is more than the 360 selected timesteps"}}),
      time_column({o + "-interval 5000 6000 {ms}", 3, {"-interval 5000 6000 starts after the 360 timesteps", "big.ms"}}),
      {o + "-channel-range 10 70 {ms}", 3, {"-channel-range ends at 70", "64 channel(s)"}},
      {o + "-spws 3 {ms}", 3, {"-spws"}},
      {o + "-pol rr {ms}", 3, {"-pol RR", "no RR correlation"}},
      {o + "-field 3 {ms}", 3, {"-field 3"}},
      {o + "-data-column CORRECTED_DATA {ms}", 3, {"no CORRECTED_DATA column"}},
      {o + "{dir}/absent.ms", 3, {"absent.ms' does not exist"}},
      {o + "-niter 10 -fits-mask {dir}/absent.fits {ms}", 3, {"absent.fits' does not exist"}},
      {o + "-niter 10 -fits-mask {dir}/small.fits {ms}", 3, {"is 32 x 32 pixels; the images are 256 x 256"}},
      {base + "-predict -name {out} {ms}", 3, {"/x-model.fits' does not exist"}},
      {base + "-predict -name {dir}/m {ms}", 3, {"m-model.fits' is 128x128 pixels; the run is 256x256"}},
      // Output folders: each made a test file in, before the MS is opened (exit 4).
      {base + "-name /proc/self/x {ms}", 4, {"the output folder /proc/self (of -name /proc/self/x) cannot take a file"}},
      {base + "-name /sys/x {ms}", 4, {"the output folder /sys (of -name /sys/x)"}},
      {base + "-intervals-out 2 -name /proc/self/x {ms}", 4, {"/proc/self (of -name /proc/self/x-t0000)"}},
      {base + "-name {dir}/afile/x {ms}", 4, {"afile (of -name", "is not a folder (it is a file); give another -name"}},
      {base + "-name {dir}/missing/x {ms}", 4, {"missing (of -name", "does not exist; create it or give another -name"}},
      {o + "-niter 10 -json /proc/self/x.json {ms}", 4, {"(of -json /proc/self/x.json) cannot take a file"}},
      {o + "-niter 10 -json {ms} {ms}", 2, {"gpuclean never writes over an input"}},
      // Memory: what -size alone needs, before the MS is opened; then the selection's (exit 4).
      {o + "-size 40000 40000 {ms}", 4,
       {"-size 40000 40000 needs at least", "of host memory before any visibility", "9.31 GiB is available",
        "give a smaller -size"},
       "GPUCLEAN_TEST_HOST_MEMORY=1e10"},
      {o + "-size 20000 20000 -abs-mem 1 {ms}", 4,
       {"-size 20000 20000 needs at least", "1.00 GiB is allowed (-mem, -abs-mem)", "or allow more memory"}},
      {o + "-abs-mem 0.5 {ms}", 4,
       {"samples needs", "0.50 GiB is allowed", "the visibilities", "select fewer channels (-channel-range) or rows"}},
  };
  const std::string before = fingerprint(ms);
  double slowest = 0;
  for (const Case& c : cases) {
    std::string args = replaced(replaced(replaced(c.args, "{ms}", ms), "{out}", out + "/x"), "{dir}", dir.path().string());
    SCOPED_TRACE(args);
    const auto start = std::chrono::steady_clock::now();
    const test::CommandResult r =
        test::run_command(dir, (c.env.empty() ? "" : c.env + " ") + test::binary_path() + " image " + args);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    slowest = std::max(slowest, seconds);
    std::printf("%5.3f s  exit %d  %s\n", seconds, r.code, (c.code == 0 ? r.out : r.err).c_str());
    EXPECT_EQ(r.code, c.code) << r.err;
    EXPECT_LT(seconds, c.most_seconds);
    if (c.code == 0) {
      EXPECT_EQ(r.err, "");
      for (const std::string& part : c.says) EXPECT_NE(r.out.find(part), std::string::npos) << part << ": " << r.out;
    } else {
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_EQ(r.err.rfind("gpuclean: error: ", 0), 0u) << r.err;
      for (const std::string& part : c.says) EXPECT_NE(r.err.find(part), std::string::npos) << part << ": " << r.err;
      EXPECT_EQ(r.out, "");  // nothing said before the refusal
    }
    EXPECT_EQ(entries(out), std::vector<std::string>{}) << "written";  // test files (.gpuclean-write-test-*) too
    EXPECT_FALSE(fs::exists(dir.file("missing"))) << "a missing folder was made";
    EXPECT_EQ(fingerprint(ms), before) << "the MS changed";
  }
  // The control: a refusal that needs the samples (none inside the uv range) comes after the read.
  const auto start = std::chrono::steady_clock::now();
  const test::CommandResult r = test::run_gpuclean(dir, "image " + base + "-minuv-l 1e12 -name " + out + "/x " + ms);
  const double control = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("control, after the read: %5.3f s  exit %d  %s", control, r.code, r.err.c_str());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("no visibility inside the uv grid has a nonzero weight"), std::string::npos) << r.err;
  EXPECT_GT(control, slowest) << "the MS is too small to tell a refusal before the read from one after it";
  EXPECT_EQ(entries(out), std::vector<std::string>{});
  EXPECT_EQ(fingerprint(ms), before);
}

// The same rules without an MS: what the parser says, and the folder test itself.
TEST(ImageChecksFirst, MoreFitTermsThanPlanesAreWscleansNote) {
  const app::ImageOptions o = app::parse_image_args({"-size", "64", "64", "-scale", "4asec", "-niter", "10",
                                                     "-channels-out", "2", "-join-channels", "-fit-spectral-pol", "4",
                                                     "a.ms"});
  EXPECT_EQ(o.deconvolution.settings.fit_spectral_pol, 4u);  // asked for: the source list has 4 terms
  ASSERT_FALSE(o.notes.empty());
  EXPECT_NE(o.notes.back().find("-fit-spectral-pol 4 over 2 joined channels"), std::string::npos) << o.notes.back();
  const app::ImageOptions enough = app::parse_image_args(
      {"-size", "64", "64", "-scale", "4asec", "-niter", "10", "-channels-out", "4", "-join-channels",
       "-fit-spectral-pol", "4", "a.ms"});
  for (const std::string& note : enough.notes) EXPECT_EQ(note.find("-fit-spectral-pol"), std::string::npos) << note;
  EXPECT_THROW(app::parse_image_args({"-size", "64", "64", "-scale", "2", "a.ms"}), clean::InvalidSettings);  // 128°
}

TEST(ImageChecksFirst, FolderWriteProblemMakesARealFile) {
  TempDir dir;
  EXPECT_EQ(app::folder_write_problem(dir.path().string()), "");
  EXPECT_TRUE(entries(dir.path().string()).empty());  // the test file is gone
  EXPECT_EQ(app::folder_write_problem(dir.file("missing")), "does not exist");
  std::ofstream(dir.file("file")) << "x";
  EXPECT_EQ(app::folder_write_problem(dir.file("file")).rfind("is not a folder", 0), 0u);
  // As root access(W_OK) says yes for /proc; making a file there fails for every user.
  EXPECT_NE(app::folder_write_problem("/proc/self").find("cannot take a file"), std::string::npos);
}

}  // namespace
}  // namespace gpuclean

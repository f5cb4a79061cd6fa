// `gpuclean image` stopped at every phase (issue 46): SIGKILL, SIGTERM and SIGINT while reading,
// after each major cycle, with every output and MODEL_DATA journal staged, after the commit's
// decision, while MODEL_DATA is written and between the renames. The run stops where the seam
// GPUCLEAN_TEST_PAUSE_AT (io/test_pause.hpp) holds it, so each signal lands in its phase.
// After each: no stray file (SIGKILL: none once the next run has started), the MS byte for byte
// as it was or as the uninterrupted run leaves it, with exactly that run's images, and the next
// run succeeds. Also: two runs that write one MS's MODEL_DATA (the second refused at once, the
// first unharmed), and a stopped column addition's storage files removed.
// The MS: 16 antennas, 2 channels, no noise; a run takes about half a second on the CPU path.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "io/fits_reader.hpp"
#include "io/ms/ms_writer.hpp"
#include "tests/io/ms_test_files.hpp"
#include "tests/support/run_command.hpp"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

/// The device of the runs: the CPU path (CI), or GPUCLEAN_TEST_IMAGE_DEVICE's (gpu on the GPU machine).
std::string device() {
  const char* d = std::getenv("GPUCLEAN_TEST_IMAGE_DEVICE");
  return d && *d ? d : "cpu";
}
const std::string kRun = "image -device " + device() + " -j 2 -size 256 256 -scale 4asec -niter 1000 -mgain 0.8 -name out/x ";
const std::vector<std::string> kKinds = {"dirty", "residual", "model", "image", "psf"};

/// Every file of the MS (subtables included) and its bytes; not table.lock, which every open rewrites.
std::map<std::string, std::string> ms_files(const std::string& ms) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(ms)) {
    if (!e.is_regular_file() || e.path().filename() == "table.lock") continue;
    out[fs::relative(e.path(), ms).string()] = test::slurp(e.path().string());
  }
  return out;
}

/// The names in `dir` that a run leaves behind when it fails to clean up (".gpuclean-*").
std::vector<std::string> litter(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(".gpuclean", 0) == 0) out.push_back(e.path().filename().string());
  return out;
}

struct Outputs {
  std::map<std::string, std::vector<float>> pixels;  // kind -> pixels; absent when the file is
};

/// The binary run in `dir` (relative paths as a user's).
test::CommandResult run_in(const TempDir& dir, const std::string& args) {
  return test::run_command(dir, "cd " + dir.path().string() + " && " + test::binary_path() + " " + args);
}

Outputs outputs(const std::string& dir, const std::string& name) {
  Outputs o;
  for (const std::string& k : kKinds) {
    const std::string path = dir + "/" + name + "-" + k + ".fits";
    if (fs::exists(path)) o.pixels[k] = io::read_fits_image(path).pixels;
  }
  return o;
}

/// A run of the binary held at `phase`, then sent `sig`: its exit status and stderr.
struct Stopped {
  int status = 0;
  std::string err;
};

Stopped run_stopped(const TempDir& dir, const std::string& ms, const std::string& phase, int sig,
                    const std::string& extra_env = "") {
  const std::string err = dir.file("stopped.err");
  const std::string command = "cd " + dir.path().string() + " && GPUCLEAN_TEST_PAUSE_AT=" + phase + " " + extra_env +
                              " exec " + test::binary_path() + " " + kRun + ms + " >/dev/null 2>" + err;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (test::slurp(err).find("paused at " + phase) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline || ::waitpid(pid, nullptr, WNOHANG) == pid) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      ADD_FAILURE() << "the run never paused at " << phase << ": " << test::slurp(err);
      return {};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, sig);
  Stopped s;
  ::waitpid(pid, &s.status, 0);
  s.err = test::slurp(err);
  return s;
}

class ImageInterrupt : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_ = std::make_unique<TempDir>();
    const std::string ms = shared_->file("a.ms");
    test::run_python(*shared_, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                                   " --sky points --antennas 16 --hours 2 --integration 600 --channels 2 --noise 0");
    before_ = ms_files(ms);
    // The uninterrupted run: its images and the MS it leaves.
    fs::create_directory(shared_->file("out"));
    fs::copy(ms, shared_->file("ref.ms"), fs::copy_options::recursive);
    const test::CommandResult r = run_in(*shared_, kRun + "ref.ms");
    ASSERT_EQ(r.code, 0) << r.err;
    after_ = ms_files(shared_->file("ref.ms"));
    images_ = outputs(shared_->file("out"), "x");
    ASSERT_EQ(images_.pixels.size(), kKinds.size());
  }
  static void TearDownTestSuite() { shared_.reset(); }

  void SetUp() override {
    fs::copy(shared_->file("a.ms"), dir_.file("a.ms"), fs::copy_options::recursive);
    fs::create_directory(dir_.file("out"));
  }

  /// The MS and out/ as nothing happened, or as the uninterrupted run left them.
  void expect_untouched() const {
    EXPECT_TRUE(ms_files(dir_.file("a.ms")) == before_) << "the MS changed";
    EXPECT_TRUE(outputs(dir_.file("out"), "x").pixels.empty()) << "an output appeared";
  }
  void expect_committed() const {
    EXPECT_TRUE(ms_files(dir_.file("a.ms")) == after_) << "the MS is not the uninterrupted run's";
    const Outputs o = outputs(dir_.file("out"), "x");
    EXPECT_EQ(o.pixels.size(), kKinds.size());
    for (const auto& [kind, pixels] : images_.pixels) EXPECT_TRUE(o.pixels.count(kind) && o.pixels.at(kind) == pixels) << kind;
  }
  void expect_no_litter() const {
    EXPECT_TRUE(litter(dir_.file("out")).empty()) << litter(dir_.file("out")).front();
    EXPECT_TRUE(litter(dir_.path().string()).empty()) << litter(dir_.path().string()).front();
  }
  /// A run that only reads the MS, into the same folder: it finishes or removes what a stopped
  /// run left there, and leaves MODEL_DATA alone.
  void next_reader_run() const {
    const test::CommandResult r = run_in(
        dir_, "image -device cpu -size 256 256 -scale 4asec -niter 0 -no-update-model-required -name out/y a.ms");
    EXPECT_EQ(r.code, 0) << r.err;
  }
  /// The same run again, uninterrupted: it succeeds and leaves what the reference run left.
  void next_run_succeeds() const {
    const test::CommandResult r = run_in(dir_, kRun + "a.ms");
    ASSERT_EQ(r.code, 0) << r.err;
    expect_committed();
    expect_no_litter();
  }

  TempDir dir_;
  static std::unique_ptr<TempDir> shared_;
  static std::map<std::string, std::string> before_, after_;
  static Outputs images_;
};
std::unique_ptr<TempDir> ImageInterrupt::shared_;
std::map<std::string, std::string> ImageInterrupt::before_, ImageInterrupt::after_;
Outputs ImageInterrupt::images_;

// Phases before the decision to commit, and after it.
const std::vector<std::string> kBefore = {"read", "cycle-1", "cycle-2", "staged"};
const std::vector<std::string> kAfter = {"decided", "model", "rename"};

TEST_F(ImageInterrupt, SigtermAndSigintBeforeTheCommitLeaveNothing) {
  for (const int sig : {SIGTERM, SIGINT}) {
    for (const std::string& phase : kBefore) {
      SCOPED_TRACE(phase + (sig == SIGTERM ? " SIGTERM" : " SIGINT"));
      const Stopped s = run_stopped(dir_, "a.ms", phase, sig);
      ASSERT_TRUE(WIFEXITED(s.status));
      EXPECT_EQ(WEXITSTATUS(s.status), 128 + sig);
      EXPECT_NE(s.err.find(std::string("gpuclean: stopped by ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") +
                           "; removed "),
                std::string::npos) << s.err;
      EXPECT_NE(s.err.find("no output and no MeasurementSet was changed"), std::string::npos) << s.err;
      EXPECT_EQ(s.err.find("error"), std::string::npos) << s.err;
      expect_untouched();
      expect_no_litter();
    }
  }
  next_run_succeeds();
}

TEST_F(ImageInterrupt, SigtermDuringTheCommitFinishesItFirst) {
  for (const int sig : {SIGTERM, SIGINT}) {
    for (const std::string& phase : kAfter) {
      SCOPED_TRACE(phase + (sig == SIGTERM ? " SIGTERM" : " SIGINT"));
      fs::remove_all(dir_.file("a.ms"));
      fs::copy(shared_->file("a.ms"), dir_.file("a.ms"), fs::copy_options::recursive);
      for (const auto& e : fs::directory_iterator(dir_.file("out"))) fs::remove(e.path());
      const Stopped s = run_stopped(dir_, "a.ms", phase, sig);
      ASSERT_TRUE(WIFEXITED(s.status));
      EXPECT_EQ(WEXITSTATUS(s.status), 128 + sig);
      EXPECT_NE(s.err.find("1 set(s) of outputs were committed whole"), std::string::npos) << s.err;
      expect_committed();
      expect_no_litter();
    }
  }
}

TEST_F(ImageInterrupt, SigkillBeforeTheCommitLeavesTheMsAsItWas) {
  for (const std::string& phase : kBefore) {
    SCOPED_TRACE(phase);
    const Stopped s = run_stopped(dir_, "a.ms", phase, SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(s.status));
    expect_untouched();  // a stage folder may stay until the next run
    next_reader_run();
    expect_untouched();
    expect_no_litter();
  }
  next_run_succeeds();
}

TEST_F(ImageInterrupt, SigkillAfterTheDecisionIsCompletedByTheNextRun) {
  for (const bool reader : {true, false}) {
    for (const std::string& phase : kAfter) {
      SCOPED_TRACE(phase + (reader ? ", then a run that only reads" : ", then a run that writes MODEL_DATA"));
      fs::remove_all(dir_.file("a.ms"));
      fs::copy(shared_->file("a.ms"), dir_.file("a.ms"), fs::copy_options::recursive);
      for (const auto& e : fs::directory_iterator(dir_.file("out"))) fs::remove_all(e.path());
      const Stopped s = run_stopped(dir_, "a.ms", phase, SIGKILL);
      ASSERT_TRUE(WIFSIGNALED(s.status));
      if (reader) {  // the stage in out/ is completed by any run that stages there
        next_reader_run();
        expect_committed();
        expect_no_litter();
      } else {  // the pointer beside the MS is completed by the next run that takes it
        next_run_succeeds();
      }
    }
  }
}

TEST_F(ImageInterrupt, ASecondWriterIsRefusedAtOnceAndTheFirstFinishes) {
  fs::copy(dir_.file("a.ms"), dir_.file("b.ms"), fs::copy_options::recursive);  // untouched neighbour
  const std::string err = dir_.file("first.err"), resume = dir_.file("resume");
  const std::string command = "cd " + dir_.path().string() + " && GPUCLEAN_TEST_PAUSE_AT=read GPUCLEAN_TEST_RESUME=" +
                              resume + " exec " + test::binary_path() + " " + kRun + "a.ms >/dev/null 2>" + err;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  while (test::slurp(err).find("paused at read") == std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));

  fs::create_directory(dir_.file("out2"));
  const auto start = std::chrono::steady_clock::now();
  const test::CommandResult second = run_in(
      dir_, "image -device " + device() + " -size 256 256 -scale 4asec -niter 1000 -mgain 0.8 -name out2/x a.ms");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(second.code, 6);
  EXPECT_NE(second.err.find("is being imaged by another gpuclean run that will write its MODEL_DATA"), std::string::npos)
      << second.err;
  EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << second.err;
  EXPECT_LT(seconds, 1.0);
  EXPECT_TRUE(fs::is_empty(dir_.file("out2")));
  // A run that only reads the MS, or one that writes another MS, is not held up.
  EXPECT_EQ(run_in(dir_, "image -device " + device() + " -size 256 256 -scale 4asec -niter 100 -no-update-model-required "
                                     "-name out2/r a.ms").code, 0);
  EXPECT_EQ(run_in(dir_, "image -device " + device() + " -size 256 256 -scale 4asec -niter 100 -mgain 0.8 -name out2/b "
                                     "b.ms").code, 0);

  std::ofstream(resume).put('\n');
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << test::slurp(err);
  expect_committed();
  expect_no_litter();
}

TEST(MsOrphanStorage, FilesOfAManagerTheTableDoesNotListAreRemoved) {
  TempDir dir;
  const std::string ms = dir.file("o.ms");
  test::run_python(dir, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                            " --sky points --antennas 4 --hours 0.5 --integration 600 --channels 1 --noise 0");
  const auto before = ms_files(ms);
  // What a process stopped inside casacore's addColumn leaves: the new manager's files, unlisted.
  std::ofstream(ms + "/table.f7") << std::string(4096, 'x');
  std::ofstream(ms + "/table.f7_TSM0") << std::string(1 << 20, 'y');
  EXPECT_EQ(io::ms::remove_orphan_storage(ms), 4096u + (1u << 20));
  EXPECT_FALSE(fs::exists(ms + "/table.f7"));
  EXPECT_FALSE(fs::exists(ms + "/table.f7_TSM0"));
  EXPECT_TRUE(ms_files(ms) == before);  // the listed managers' files untouched
}

}  // namespace
}  // namespace gpuclean

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/fits_error.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "io/staged_outputs.hpp"
#include "io/text_writer.hpp"
#include "tests/support/temp_dir.hpp"

namespace gio = gpuclean::io;
namespace fs = std::filesystem;
using gpuclean::test::TempDir;

namespace {

gio::FitsError::Kind kind_of_read(const std::string& path, std::string* message) {
  try {
    gio::read_fits_image(path);
  } catch (const gio::FitsError& e) {
    *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error for " << path;
  return gio::FitsError::Kind::kOutput;
}

void write_small(const std::string& path, const gio::WriteOptions& opt) {
  std::vector<float> px(16, 1.0f);
  gio::write_fits_image(path, px.data(), 4, 4, gio::FitsHeader{}, {4, 4}, opt);
}

std::size_t files_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// Runs `write` in a child process whose file-size limit (20000 bytes) stops a large write
// part-way (EFBIG, as a full disk would). Returns 42 when it threw an output FitsError, 43 for
// another kind, 0 when it did not throw.
template <class Write>
int exit_of_write_with_small_file_limit(Write write) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{20000, 20000};
    setrlimit(RLIMIT_FSIZE, &lim);
    try {
      write();
    } catch (const gio::FitsError& e) {
      _exit(e.kind() == gio::FitsError::Kind::kOutput ? 42 : 43);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(FitsErrors, MissingFileSaysSo) {
  TempDir dir;
  std::string msg;
  EXPECT_EQ(kind_of_read(dir.file("nope.fits"), &msg), gio::FitsError::Kind::kInput);
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
}

TEST(FitsErrors, TextFileNamedFitsIsRefused) {
  TempDir dir;
  std::ofstream(dir.file("fake.fits")) << "this is not a FITS file\n";
  std::string msg;
  EXPECT_EQ(kind_of_read(dir.file("fake.fits"), &msg), gio::FitsError::Kind::kInput);
  EXPECT_NE(msg.find("not a readable FITS file"), std::string::npos) << msg;
  // Reading the shape alone refuses it the same way.
  try {
    gio::read_fits_shape(dir.file("fake.fits"));
    ADD_FAILURE() << "read_fits_shape took a text file";
  } catch (const gio::FitsError& e) {
    EXPECT_EQ(e.kind(), gio::FitsError::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("not a readable FITS file"), std::string::npos) << e.what();
  }
}

TEST(FitsErrors, RefusesToOverwriteUnlessAsked) {
  TempDir dir;
  gio::WriteOptions opt;
  write_small(dir.file("a.fits"), opt);
  try {
    write_small(dir.file("a.fits"), opt);
    FAIL() << "overwrote without --overwrite";
  } catch (const gio::FitsError& e) {
    EXPECT_EQ(e.kind(), gio::FitsError::Kind::kExists);
  }
  opt.overwrite = true;
  EXPECT_NO_THROW(write_small(dir.file("a.fits"), opt));
  EXPECT_EQ(files_in(dir.path()), 1u) << "no temporary file left behind";
}

TEST(FitsErrors, NeverWritesOverAnInputEvenWithOverwrite) {
  TempDir dir;
  gio::WriteOptions opt;
  write_small(dir.file("in.fits"), opt);
  const auto before = fs::last_write_time(dir.file("in.fits"));
  opt.overwrite = true;
  opt.inputs = {dir.file("in.fits")};
  EXPECT_THROW(write_small(dir.file("./in.fits"), opt), gio::FitsError);
  fs::create_hard_link(dir.file("in.fits"), dir.file("link.fits"));
  EXPECT_THROW(write_small(dir.file("link.fits"), opt), gio::FitsError);
  EXPECT_EQ(fs::last_write_time(dir.file("in.fits")), before);
}

TEST(FitsErrors, FailedWriteLeavesNoFile) {
  // A child process whose file-size limit is far below the image: CFITSIO's write fails part-way.
  TempDir dir;
  const std::string target = dir.file("big.fits");
  const int code = exit_of_write_with_small_file_limit([&] {
    std::vector<float> px(256 * 256, 2.0f);
    gio::write_fits_image(target, px.data(), 256, 256, gio::FitsHeader{}, {256, 256}, gio::WriteOptions{});
  });
  EXPECT_EQ(code, 42) << "the write should fail with an output error";
  EXPECT_FALSE(fs::exists(target));
  EXPECT_EQ(files_in(dir.path()), 0u) << "the temporary file must be removed";
}

TEST(FitsErrors, MissingOutputFolderIsReportedBeforeWriting) {
  TempDir dir;
  try {
    write_small(dir.file("no/such/folder/x.fits"), gio::WriteOptions{});
    FAIL();
  } catch (const gio::FitsError& e) {
    EXPECT_EQ(e.kind(), gio::FitsError::Kind::kOutput);
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(TextWriter, WritesAtomicallyAndRefusesToOverwrite) {
  TempDir dir;
  gio::write_text_file(dir.file("a.csv"), "x,y\n1,2\n", false);
  std::ifstream in(dir.file("a.csv"));
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(all, "x,y\n1,2\n");
  EXPECT_THROW(gio::write_text_file(dir.file("a.csv"), "z", false), gio::FitsError);
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(FitsErrors, HeaderLargerThanTheFileIsRefusedBeforeReading) {
  TempDir dir;
  const std::string path = dir.file("cut.fits");
  std::vector<float> px(128 * 128, 1.0f);
  gio::write_fits_image(path, px.data(), 128, 128, gio::FitsHeader{}, {128, 128}, gio::WriteOptions{});
  fs::resize_file(path, fs::file_size(path) - 10000);
  std::string msg;
  EXPECT_EQ(kind_of_read(path, &msg), gio::FitsError::Kind::kInput);
  EXPECT_NE(msg.find("truncated or its header is wrong"), std::string::npos) << msg;
  EXPECT_NE(msg.find("128x128"), std::string::npos) << msg;
  EXPECT_THROW(gio::read_fits_shape(path), gio::FitsError);
}

TEST(StagedOutputs, AFailedLastOutputRemovesTheOthers) {
  // A child whose file-size limit lets the small outputs through and stops the last, large one
  // part-way (EFBIG, as a full disk would): none of the run's outputs may remain.
  TempDir dir;
  const int code = exit_of_write_with_small_file_limit([&] {
    gio::WriteOptions staged_opt;
    staged_opt.overwrite = true;
    std::vector<float> big(256 * 256, 2.0f);
    gio::StagedOutputs staged(false);
    write_small(staged.stage(dir.file("model.fits")), staged_opt);
    gio::write_text_file(staged.stage(dir.file("c.csv")), "x,y\n1,2\n", true);
    gio::write_fits_image(staged.stage(dir.file("restored.fits")), big.data(), 256, 256, gio::FitsHeader{},
                          {256, 256}, staged_opt);
    staged.commit();
  });
  EXPECT_EQ(code, 42) << "the last write should fail with an output error";
  EXPECT_EQ(files_in(dir.path()), 0u) << "no output and no staged file may remain";
}

TEST(StagedOutputs, CommitPublishesAllOrNone) {
  TempDir dir;
  fs::create_directories(dir.path() / "b");
  {
    gio::StagedOutputs staged(false);
    gio::write_text_file(staged.stage(dir.file("a.txt")), "a", true);
    gio::write_text_file(staged.stage(dir.file("b/b.txt")), "b", true);
    EXPECT_FALSE(fs::exists(dir.file("a.txt")));  // nothing appears before the commit
    fs::remove_all(dir.path() / "b");               // the second rename now fails
    EXPECT_THROW(staged.commit(), gio::FitsError);
  }
  EXPECT_EQ(files_in(dir.path()), 0u) << "the first output must not stay when the second cannot appear";

  std::ofstream(dir.file("keep.txt")) << "old";
  {
    gio::StagedOutputs staged(false);  // without overwrite an existing target is refused at commit
    gio::write_text_file(staged.stage(dir.file("new.txt")), "n", true);
    gio::write_text_file(staged.stage(dir.file("keep.txt")), "k", true);
    EXPECT_THROW(staged.commit(), gio::FitsError);
  }
  EXPECT_FALSE(fs::exists(dir.file("new.txt")));
  EXPECT_EQ(files_in(dir.path()), 1u);
  std::ifstream keep(dir.file("keep.txt"));
  std::string text;
  keep >> text;
  EXPECT_EQ(text, "old");

  gio::StagedOutputs staged(true);
  gio::write_text_file(staged.stage(dir.file("keep.txt")), "k", true);
  staged.commit();
  std::ifstream replaced(dir.file("keep.txt"));
  replaced >> text;
  EXPECT_EQ(text, "k");
  EXPECT_EQ(files_in(dir.path()), 1u);
}

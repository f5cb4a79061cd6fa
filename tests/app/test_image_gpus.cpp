// `gpuclean image -channels-out 4` over several GPUs (multi-gpu-plan.md §2.4): the channels
// spread over the GPUs (-max-gpus, GPUCLEAN_TEST_IMAGE_GPUS) give the images one GPU gives,
// dirty-only and with a short clean, joined and not. Two lanes on device 0 ("0,0") run the
// several-GPU code on any GPU machine; every GPU of the host is skipped below two.
//
// "The images one GPU gives": the gridder adds with float atomics (imaging/gpu/grid_kernels.cu),
// whose order may change from run to run, so each case first runs one GPU twice. Where those two
// are bit-identical the spread run must be too; otherwise it may differ from one GPU by at most
// twice what one GPU differs from itself, with a floor of kFloor of each file's peak.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/image/image_args.hpp"
#include "app/image/image_gpus.hpp"
#include "clean/errors.hpp"
#include "io/fits_reader.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean {
namespace {

using test::TempDir;

constexpr double kFloor = 1e-6;  // of a file's peak, where one GPU is not bit-identical to itself

TEST(ImageGpus, DeviceList) {
  EXPECT_EQ(app::image_gpus(0, 4, ""), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(app::image_gpus(2, 4, ""), (std::vector<int>{0, 1}));
  EXPECT_EQ(app::image_gpus(8, 2, ""), (std::vector<int>{0, 1}));
  EXPECT_TRUE(app::image_gpus(0, 0, "").empty());
  EXPECT_EQ(app::image_gpus(1, 1, "0,0"), (std::vector<int>{0, 0}));  // the list wins over -max-gpus
  EXPECT_EQ(app::image_gpus(0, 4, "3,1"), (std::vector<int>{3, 1}));
  for (const char* bad : {"1", "0,x", "0,", "-1", "0,,0"})
    EXPECT_THROW(app::image_gpus(0, 1, bad), clean::InvalidSettings) << bad;
  EXPECT_EQ(app::gpu_list_text({0, 2}), "0,2");
}

TEST(ImageGpus, MaxGpusOption) {
  const std::vector<std::string> base = {"-size", "64", "64", "-scale", "4asec", "a.ms"};
  const auto parse = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), base.begin(), base.end());
    return app::parse_image_args(extra);
  };
  EXPECT_EQ(parse({}).max_gpus, 0u);  // all visible GPUs
  EXPECT_EQ(parse({"-max-gpus", "2"}).max_gpus, 2u);
  EXPECT_EQ(parse({"--max-gpus", "1"}).max_gpus, 1u);
  for (const char* bad : {"-1", "x", "1.5", ""})
    EXPECT_THROW(parse({"-max-gpus", bad}), clean::InvalidSettings) << bad;
}

// A bad value is one line on stderr and exit 2, before any MS is opened.
TEST(ImageGpus, BadValuesExitTwo) {
  TempDir dir;
  const test::CommandResult r =
      test::run_gpuclean(dir, "image -max-gpus x -size 64 64 -scale 4asec " + dir.file("none.ms"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("-max-gpus"), std::string::npos) << r.err;
  if (!cuda::has_usable_device()) return;  // the list is read only for the GPU
  const test::CommandResult list = test::run_command(
      dir, "GPUCLEAN_TEST_IMAGE_GPUS=0,99 " + test::binary_path() + " image -size 64 64 -scale 4asec " +
               dir.file("none.ms"));
  EXPECT_EQ(list.code, 2) << list.err;
  EXPECT_EQ(std::count(list.err.begin(), list.err.end(), '\n'), 1) << list.err;
}

struct ImageRun {
  std::map<std::string, io::FitsImage> files;  // by file name tail: "0002-dirty", "MFS-model", ...
  std::string out;
  nlohmann::json summary;
};

struct Case {
  bool clean, joined;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return std::string(info.param.clean ? "Clean" : "Dirty") + (info.param.joined ? "Joined" : "Unjoined");
}

class ImageGpusIdentity : public testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    if (!cuda::has_usable_device()) return;
    dir_ = new TempDir;
    ms_ = dir_->file("a.ms");
    test::run_python(*dir_, test::source_dir() + "/data/simulate_ms.py --out " + ms_ +
                                " --sky points --antennas 24 --hours 2 --integration 300 --channels 8 --noise 0.01");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
  }

  ImageRun run(const std::string& name, const std::string& gpus, const std::string& env = "") const {
    const Case c = GetParam();
    std::string args = " image -j 4 -channels-out 4 -make-psf -size 256 256 -scale 4asec -device gpu " + gpus;
    if (c.clean) args += " -niter 300 -mgain 0.8 -auto-threshold 3 -json " + dir_->file(name + ".json");
    if (c.joined) args += " -join-channels";
    const test::CommandResult r =
        test::run_command(*dir_, env + test::binary_path() + args + " -name " + dir_->file(name) + " " + ms_);
    EXPECT_EQ(r.code, 0) << r.err;
    ImageRun out;
    out.out = r.out;
    std::vector<std::string> kinds = {"dirty", "psf"};
    if (c.clean) kinds.insert(kinds.end(), {"model", "residual", "image"});
    for (const char* tag : {"0000", "0001", "0002", "0003", "MFS"})
      for (const std::string& kind : kinds) {
        const std::string tail = std::string(tag) + "-" + kind;
        out.files.emplace(tail, io::read_fits_image(dir_->file(name + "-" + tail + ".fits")));
      }
    if (c.clean) out.summary = nlohmann::json::parse(std::ifstream(dir_->file(name + ".json")));
    return out;
  }

  // The largest |a − b| / peak|a| over every file, and the file.
  static std::pair<double, std::string> difference(const ImageRun& a, const ImageRun& b) {
    std::pair<double, std::string> worst{0.0, ""};
    for (const auto& [tail, fa] : a.files) {
      const io::FitsImage& fb = b.files.at(tail);
      double peak = 0, d = 0;
      for (std::size_t i = 0; i < fa.pixels.size(); ++i) {
        peak = std::max(peak, std::abs(double{fa.pixels[i]}));
        d = std::max(d, std::abs(double{fa.pixels[i]} - fb.pixels[i]));
      }
      const double rel = peak > 0 ? d / peak : d;
      if (rel > worst.first || worst.second.empty()) worst = {rel, tail};
    }
    return worst;
  }

  // One GPU twice, then `spread`: equal to one GPU as the header says.
  void expect_same_images(const std::string& label, const ImageRun& spread) const {
    const ImageRun one = run("one", "-max-gpus 1"), again = run("again", "-max-gpus 1");
    const auto [self, self_file] = difference(one, again);
    const auto [d, file] = difference(one, spread);
    std::printf("%s: one GPU against itself %.3g (%s), spread against one GPU %.3g (%s) of the file's peak\n",
                label.c_str(), self, self_file.c_str(), d, file.c_str());
    if (self == 0) {
      EXPECT_EQ(d, 0.0) << label << ": not bit-identical to one GPU in " << file;
    } else {
      EXPECT_LE(d, std::max(2 * self, kFloor)) << label << ": " << file;
    }
  }

  static TempDir* dir_;
  static std::string ms_;
};

TempDir* ImageGpusIdentity::dir_ = nullptr;
std::string ImageGpusIdentity::ms_;

TEST_P(ImageGpusIdentity, TwoLanesOnOneGpu) {
  const ImageRun spread = run("lanes", "", "GPUCLEAN_TEST_IMAGE_GPUS=0,0 ");
  // The several-GPU path was taken: its line, and the summary's list.
  if (GetParam().clean) {
    EXPECT_NE(spread.out.find("visibilities on 2 GPUs (0,0): channel"), std::string::npos) << spread.out;
    EXPECT_EQ(spread.summary.at("gpus"), nlohmann::json::array({0, 0}));
  } else {
    EXPECT_NE(spread.out.find(" gpus=0,0\n"), std::string::npos) << spread.out;
  }
  expect_same_images("lanes 0,0", spread);
}

TEST_P(ImageGpusIdentity, AllGpus) {
  const int gpus = cuda::device_count();
  if (gpus < 2) GTEST_SKIP() << "one GPU: the spread over several GPUs needs two";
  const ImageRun spread = run("all", "-max-gpus 0");
  if (GetParam().clean) {
    EXPECT_EQ(spread.summary.at("gpus").size(), static_cast<std::size_t>(gpus));
  }
  expect_same_images("all " + std::to_string(gpus) + " GPUs", spread);
}

// A joined group's session split over the lanes' GPUs (clean/run_plan.hpp; GPUCLEAN_SPLIT_JOINED=1
// splits it though it fits one GPU): over lanes 0,0 on one GPU, then over every GPU of the host,
// the images one GPU gives (the split is bit-identical to one GPU, test_joined_split).
TEST_P(ImageGpusIdentity, JoinedSessionSplit) {
  if (!GetParam().clean || !GetParam().joined) GTEST_SKIP() << "only a joined clean has a session to split";
  const ImageRun lanes = run("split", "", "GPUCLEAN_TEST_IMAGE_GPUS=0,0 GPUCLEAN_SPLIT_JOINED=1 ");
  EXPECT_NE(lanes.out.find("the joined planes split over GPUs 0,0\n"), std::string::npos) << lanes.out;
  expect_same_images("joined session split over lanes 0,0", lanes);
  const int gpus = cuda::device_count();
  if (gpus < 2) GTEST_SKIP() << "one GPU: the split over several GPUs needs two";
  const ImageRun all = run("split-all", "-max-gpus 0", "GPUCLEAN_SPLIT_JOINED=1 ");
  EXPECT_NE(all.out.find("the joined planes split over GPUs 0,1"), std::string::npos) << all.out;
  expect_same_images("joined session split over " + std::to_string(gpus) + " GPUs", all);
}

INSTANTIATE_TEST_SUITE_P(Cases, ImageGpusIdentity,
                         testing::Values(Case{false, false}, Case{false, true}, Case{true, false}, Case{true, true}),
                         case_name);

}  // namespace
}  // namespace gpuclean

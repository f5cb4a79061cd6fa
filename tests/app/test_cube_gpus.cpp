// A cube's plane groups spread over GPUs: the list is the one given or the visible devices up to
// --max-gpus; two workers' shares of one GPU (the spreading's code path on any GPU) and every GPU
// of the host (skipped below two) give each channel bit for bit what one worker on one GPU gives.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "app/cube/cube_run.hpp"
#include "io/fits_reader.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
namespace app = gpuclean::app;
namespace cuda = gpuclean::cuda;
using gpuclean::test::run_gpuclean;
using gpuclean::test::TempDir;

namespace {

// The options the command line `args` gives, as the user's run would get them.
app::RunOptions parsed(const std::string& args) {
  auto cli = app::make_cli();
  std::vector<std::string> words;
  std::istringstream in(args);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<const char*> argv = {"gpuclean"};
  for (const auto& w : words) argv.push_back(w.c_str());
  cli->app->parse(static_cast<int>(argv.size()), argv.data());
  app::RunOptions r = cli->run;
  r.verbosity = app::Verbosity::kQuiet;
  return r;
}

// Every FITS output under `dir` whose name starts with `prefix`: name -> pixels.
std::map<std::string, std::vector<float>> outputs(const fs::path& dir, const std::string& prefix) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".fits")
      out[name.substr(prefix.size())] = gpuclean::io::read_fits_image(e.path().string()).pixels;
  }
  return out;
}

class CubeGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
    const auto r = run_gpuclean(tmp_, "simulate --size 128 --sources 8 --seed 11 --channels 4 --bandwidth 4e8 "
                                      "--name obs --out " + tmp_.file("sim"));
    ASSERT_EQ(r.code, 0) << r.err;
  }

  // The channel set cleaned with `gpus` (empty: the visible ones) and `extra` options; its
  // summary, and its outputs as out-<tag>-*.
  nlohmann::json clean(const std::string& tag, const std::vector<int>& gpus, const std::string& extra) {
    app::RunOptions o = parsed(tmp_.file("sim/obs") + " --wsclean-channels --device gpu --niter 400 -o " +
                               tmp_.file("out-" + tag) + " " + extra);
    o.cube.gpus = gpus;
    return app::run_cube(o);
  }

  void expect_same_outputs(const std::string& a, const std::string& b) {
    const auto x = outputs(tmp_.path(), "out-" + a), y = outputs(tmp_.path(), "out-" + b);
    ASSERT_EQ(x.size(), 15u);  // 4 channels and MFS: image, model, residual each; none missing
    ASSERT_EQ(x.size(), y.size());
    for (const auto& [name, pixels] : x) {
      ASSERT_TRUE(y.count(name)) << name;
      EXPECT_EQ(pixels, y.at(name)) << name;
    }
  }

  TempDir tmp_;
};

}  // namespace

TEST(CubeGpuList, GivenListOrTheVisibleDevicesUpToMaxGpus) {
  app::CubeOptions c;
  c.gpus = {3, 1};
  EXPECT_EQ(app::cube_gpus(c), (std::vector<int>{3, 1}));
  c.gpus.clear();
  const std::vector<int> all = app::cube_gpus(c);
  if (!cuda::has_usable_device()) {
    EXPECT_TRUE(all.empty());
    return;
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(cuda::device_count()));
  c.max_gpus = 1;
  EXPECT_EQ(app::cube_gpus(c), (std::vector<int>{0}));
}

TEST_F(CubeGpus, TwoSharesOfOneGpuGiveTheOneWorkerResult) {
  const auto one = clean("one", {0}, "--parallel-planes 1");
  const auto two = clean("two", {0, 0}, "--parallel-planes 1");
  EXPECT_EQ(one["gpus"], nlohmann::json::array({0}));
  EXPECT_EQ(two["gpus"], nlohmann::json::array({0}));
  ASSERT_EQ(two["runs"].size(), 4u);
  expect_same_outputs("one", "two");
}

TEST_F(CubeGpus, EveryGpuOfTheHostGivesTheOneGpuResult) {
  if (cuda::device_count() < 2) GTEST_SKIP() << "one GPU: the spreading over several is not run";
  const auto one = parsed("--max-gpus 1");
  ASSERT_EQ(one.cube.max_gpus, 1u);
  const auto single = clean("single", {}, "--max-gpus 1 --parallel-planes 1");
  const auto all = clean("all", {}, "--parallel-planes 1");
  EXPECT_EQ(single["gpus"].size(), 1u);
  // Four channels, one at a time on each GPU: at least two GPUs cleaned.
  EXPECT_GE(all["gpus"].size(), 2u) << all.dump();
  expect_same_outputs("single", "all");
}

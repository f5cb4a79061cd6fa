// The VisStore over several GPUs (imaging/gpu/vis_store_multi) against one GPU backend, call by
// call: PSF, dirty image, residuals after two predicts, for 4 channels of different sizes, the
// lanes driven from a thread each (as gpuclean image does). Two lanes on device 0 run everywhere
// there is a GPU; every visible GPU is skipped below two. Resident and streamed; the store's line
// names each lane's global channels, its mode and its GPU.
//
// One GPU is run twice first: the gridder adds with float atomics, whose order may change from
// run to run. Where one GPU repeats itself bit for bit the lanes must too; otherwise they may
// differ from one GPU by at most twice its own run-to-run difference (floor kFloor).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "imaging/channel_owners.hpp"
#include "imaging/gpu/vis_store_gpu.hpp"
#include "imaging/gpu/vis_store_multi.hpp"
#include "imaging/vis_store.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/imaging/direct_ft.hpp"
#include "tests/imaging/vis_store_samples.hpp"

namespace gpuclean::imaging {
namespace {

using namespace direct_ft;  // kArcsec, kThreads
using test_samples::max_relative_difference;

constexpr double kFloor = 1e-6;  // of an image's peak, where one GPU does not repeat itself
const ImageGeometry kImage{256, 256, 10 * kArcsec};

std::vector<double> model(std::size_t seed) {
  return test_samples::random_point_model(kImage.width, kImage.height, seed);
}

const std::vector<ChannelSamples>& channels() {
  static const std::vector<ChannelSamples> c = {
      test_samples::random_channel_samples(600000, kImage.scale, 300, 3),
      test_samples::random_channel_samples(400000, kImage.scale, 300, 5),
      test_samples::random_channel_samples(500000, kImage.scale, 300, 7),
      test_samples::random_channel_samples(450000, kImage.scale, 300, 9)};
  return c;
}

/// Five images per channel ([5c + k]): PSF, dirty, residual without a model, after a predict,
/// after a second predict. The lanes' channels run on a thread per lane.
std::vector<std::vector<double>> run(VisStore& store) {
  for (const ChannelSamples& s : channels()) {
    double sum = 0;
    for (float x : s.cw) sum += x;
    store.add_channel(s, sum);
  }
  std::vector<std::vector<double>> images(5 * channels().size());
  const auto one = [&](std::size_t c) {
    images[5 * c] = store.invert_psf(c);
    images[5 * c + 1] = store.invert_dirty(c);
    images[5 * c + 2] = store.invert_residual(c);
    store.predict(c, model(c));
    images[5 * c + 3] = store.invert_residual(c);
    store.predict(c, model(c + 10));
    images[5 * c + 4] = store.invert_residual(c);
  };
  std::map<std::size_t, std::vector<std::size_t>> by_lane;
  for (std::size_t c = 0; c < channels().size(); ++c) by_lane[store.lane_of(c)].push_back(c);
  std::vector<std::thread> threads;
  for (const auto& [lane, cs] : by_lane)
    threads.emplace_back([&one, &cs = cs] {
      for (std::size_t c : cs) one(c);
    });
  for (std::thread& t : threads) t.join();
  return images;
}

std::vector<std::vector<double>> run_single(std::size_t budget) {
  VisStore store({kImage, 1e-4, kThreads});
  GpuGridderOptions options;
  options.budget_bytes = budget;
  store.set_backend(make_gpu_vis_store_backend(options));
  return run(store);
}

// The largest relative difference over the images, and how many images differ at all.
std::pair<double, std::size_t> difference(const std::vector<std::vector<double>>& a,
                                          const std::vector<std::vector<double>>& b) {
  double worst = 0;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, max_relative_difference(b[i], a[i]));
    differ += a[i] != b[i];
  }
  return {worst, differ};
}

// What the store's line must say of each lane holding channels: its global channels, `mode` and
// its GPU ("channels 2-3 resident on GPU 1").
void expect_every_lane(const VisStore& store, const std::vector<int>& gpus, const std::string& mode,
                       const std::string& line) {
  for (std::size_t l = 0; l < gpus.size(); ++l) {
    std::vector<std::size_t> cs;
    for (std::size_t c = 0; c < channels().size(); ++c)
      if (store.lane_of(c) == l) cs.push_back(c);
    if (cs.empty()) continue;
    const std::string named = cs.size() > 1 ? "channels " + std::to_string(cs.front()) + "-" + std::to_string(cs.back())
                                            : "channel " + std::to_string(cs.front());
    EXPECT_NE(line.find(named + " " + mode + " on GPU " + std::to_string(gpus[l])), std::string::npos)
        << "lane " << l << ": " << line;
  }
}

void expect_like_one_gpu(const std::vector<int>& gpus, std::size_t budget, const std::string& mode) {
  const auto one = run_single(budget), again = run_single(budget);
  VisStore store({kImage, 1e-4, kThreads});
  GpuGridderOptions options;
  options.budget_bytes = budget;
  std::vector<std::size_t> counts;
  for (const ChannelSamples& s : channels()) counts.push_back(s.cw.size());
  store.set_backend(make_multi_gpu_vis_store_backend(options, gpus, channel_owners(counts, gpus.size())));
  const auto spread = run(store);
  const std::string line = store.describe();
  EXPECT_EQ(store.lanes(), gpus.size());
  EXPECT_NE(line.find("on " + std::to_string(gpus.size()) + " GPUs"), std::string::npos) << line;
  expect_every_lane(store, gpus, mode, line);
  if (mode != "resident") {  // no lane resident (a streamed lane's reason may speak of keeping samples)
    EXPECT_EQ(line.find("resident on GPU"), std::string::npos) << line;
  }
  const auto [self, self_images] = difference(one, again);
  const auto [d, d_images] = difference(one, spread);
  std::printf("%s: one GPU against itself %.3g (%zu of %zu images differ); lanes against one GPU %.3g (%zu differ)\n",
              line.c_str(), self, self_images, one.size(), d, d_images);
  if (self == 0) {
    EXPECT_EQ(d_images, 0u) << "one GPU repeats itself bit for bit, the lanes do not";
  } else {
    EXPECT_LE(d, std::max(2 * self, kFloor));
  }
  // The images are the channels' own: the residual of a model differs from the dirty image.
  EXPECT_GT(max_relative_difference(spread[3], spread[1]), 1e-2);
}

class VisStoreMulti : public testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
  }
};

TEST_F(VisStoreMulti, TwoLanesOnOneGpuResident) { expect_like_one_gpu({0, 0}, 0, "resident"); }

TEST_F(VisStoreMulti, FourLanesOnOneGpuStreamed) {
  // 100 MB a lane: the fixed part fits, no channel resident beside it does (each has > 300 000
  // samples of 120 B while prepared, beside 64 MiB of slack).
  expect_like_one_gpu({0, 0, 0, 0}, 100u << 20, "streamed from pinned host memory");
}

TEST_F(VisStoreMulti, EveryGpu) {
  const int n = cuda::device_count();
  if (n < 2) GTEST_SKIP() << "one GPU: the spread over several GPUs needs two";
  std::vector<int> gpus;
  for (int g = 0; g < n; ++g) gpus.push_back(g);
  expect_like_one_gpu(gpus, 0, "resident");
}

// The line names each lane by its global channels (its backend's line counts from 0) and leaves
// out a lane without channels. No GPU needed.
TEST(VisStoreMultiOwners, LineNamesGlobalChannels) {
  const std::string line =
      describe_lanes({0, 1, 2}, {0, 0, 2, 2, 2}, {"resident on GPU 0: x", "unused", "streamed on GPU 2 (y)"});
  EXPECT_EQ(line, "on 3 GPUs (0,1,2): channels 0-1 resident on GPU 0: x; channels 2-4 streamed on GPU 2 (y)");
  EXPECT_EQ(describe_lanes({3, 3}, {0, 1}, {"a", "b"}), "on 2 GPUs (3,3): channel 0 a; channel 1 b");
}

TEST(VisStoreMultiOwners, RefusesOwnersOutOfOrder) {
  if (!cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
  EXPECT_THROW(make_multi_gpu_vis_store_backend({}, {0, 0}, {1, 0}), std::invalid_argument);
  EXPECT_THROW(make_multi_gpu_vis_store_backend({}, {0, 0}, {0, 2}), std::invalid_argument);
}

}  // namespace
}  // namespace gpuclean::imaging

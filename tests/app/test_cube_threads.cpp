// A cube run's host work over threads (app/cube/plane_pool.hpp): the pool visits every index
// once and reports the lowest failing one, its tasks' OpenMP teams sharing the cores; a WSClean
// set read and written with --threads 1 and with several gives the same planes and
// bit-identical files, a cube's planes keep their place; the first broken channel is the one
// named, whatever the threads; a failed output still leaves none. Also plan_run's rule for the
// workers of a GPU run (clean/plan_workers.hpp), which needs no GPU to check.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "app/cube/cube_input.hpp"
#include "app/cube/cube_output.hpp"
#include "app/cube/plane_pool.hpp"
#include "clean/deconvolution.hpp"
#include "clean/plan_workers.hpp"
#include "io/fits_cube.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "io/wsclean_channels.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
namespace app = gpuclean::app;
namespace clean = gpuclean::clean;
namespace io = gpuclean::io;
using gpuclean::test::run_gpuclean;
using gpuclean::test::TempDir;

namespace {

TEST(PlanePool, VisitsEveryIndexOnceAndRethrowsTheLowestFailure) {
  for (std::size_t threads : {1u, 3u, 8u}) {
    std::vector<std::atomic<int>> seen(50);
    app::for_each_plane(50, threads, [&](std::size_t i) { ++seen[i]; });
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1) << threads << " threads";
  }
  // Index 4 fails before index 9 does, or after it: either way the serial loop's first failure
  // (4) is reported.
  for (const std::size_t slow : {4u, 9u}) {
    for (int round = 0; round < 3; ++round) {
      try {
        std::atomic<int> started{0};
        app::for_each_plane(20, 8, [slow, &started](std::size_t i) {
          if (i != 4 && i != 9) return;
          // Both running at once (a thread each), then the slow one throws 20 ms after the other.
          ++started;
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
          while (started.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
          if (i == slow) std::this_thread::sleep_for(std::chrono::milliseconds(20));
          throw std::runtime_error("plane " + std::to_string(i));
        });
        ADD_FAILURE() << "no exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "plane 4") << "slow " << slow;
      }
    }
  }
  // A given order is the order the tasks are taken in; a failure still ranks by its index.
  std::vector<std::size_t> taken;
  try {
    app::for_each_plane(std::vector<std::size_t>{5, 0, 1, 2, 3, 4}, 1, [&](std::size_t i) {
      taken.push_back(i);
      if (i == 5 || i == 2) throw std::runtime_error("plane " + std::to_string(i));
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "plane 2");
  }
  EXPECT_EQ(taken, (std::vector<std::size_t>{5, 0, 1, 2}));
  EXPECT_EQ(app::plane_threads(64, 0), std::min<std::size_t>(64, std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_EQ(app::plane_threads(64, 3), 3u);
  EXPECT_EQ(app::plane_threads(2, 16), 2u);
  EXPECT_EQ(app::plane_threads(0, 4), 1u);
}

// A task's OpenMP loops get the cores over the pool's threads; the caller's own setting is kept.
TEST(PlanePool, TasksShareTheCoresWithTheirOpenMpTeams) {
  const int before = omp_get_max_threads();
  std::mutex m;
  std::vector<int> seen;
  app::for_each_plane(6, 2, [&](std::size_t) {
    std::lock_guard<std::mutex> lock(m);
    seen.push_back(omp_get_max_threads());
  });
  for (int t : seen) EXPECT_EQ(t, std::max(1, omp_get_num_procs() / 2));
  EXPECT_EQ(omp_get_max_threads(), before);
}

TEST(PlanWorkers, EachGpuTakesAtMostItsShareOfTheGroups) {
  // 64 planes: on one GPU 16 at once (each worker cleans 4); on 4 GPUs 16 per GPU.
  EXPECT_EQ(clean::plan_workers(64, 1, 16, 100), 16u);
  EXPECT_EQ(clean::plan_workers(64, 4, 16, 100), 64u);
  EXPECT_EQ(clean::plan_workers(64, 4, 8, 100), 32u);
  // Fewer groups than workers would allow: never a worker without a group.
  EXPECT_EQ(clean::plan_workers(10, 4, 16, 100), 10u);
  EXPECT_EQ(clean::plan_workers(3, 4, 16, 100), 3u);
  // The memory (spare groups per GPU) bounds each GPU.
  EXPECT_EQ(clean::plan_workers(64, 4, 16, 2), 8u);
  // Never 0.
  EXPECT_EQ(clean::plan_workers(1, 0, 0, 0), 1u);
}

TEST(PrepareWorkers, NothingOffTheGpuAndAWorkerThatCannotBeMadeIsLeftToItsFirstRun) {
  clean::DeconvolverPool pool;
  clean::prepare_workers(pool, 3, clean::Algorithm::kClark, clean::Device::kCpu, {});
  EXPECT_TRUE(pool.empty());
  // Two workers on GPU 0 (or on a GPU that is not there): made and prepared, or left unmade.
  EXPECT_NO_THROW(clean::prepare_workers(pool, 2, clean::Algorithm::kClark, clean::Device::kGpu, {0, 0}));
  ASSERT_EQ(pool.size(), 2u);
  const bool gpu = gpuclean::cuda::has_usable_device();
  for (const auto& d : pool) EXPECT_EQ(d != nullptr, gpu);
}

TEST(PlanWorkers, TheAutomaticCountIsTheRunsOverItsGpus) {
  // 16 at once for the run: 16 on one GPU, 8 on each of 2, 4 on each of 4 (each worker then
  // cleans 4 of 64 planes), never below 4 a GPU, never 0.
  EXPECT_EQ(clean::automatic_parallel_per_gpu(1, 16, 4), 16u);
  EXPECT_EQ(clean::automatic_parallel_per_gpu(0, 16, 4), 16u);
  EXPECT_EQ(clean::automatic_parallel_per_gpu(2, 16, 4), 8u);
  EXPECT_EQ(clean::automatic_parallel_per_gpu(4, 16, 4), 4u);
  EXPECT_EQ(clean::automatic_parallel_per_gpu(8, 16, 4), 4u);
  EXPECT_EQ(clean::automatic_parallel_per_gpu(3, 16, 4), 5u);
  EXPECT_EQ(clean::automatic_parallel_per_gpu(4, 0, 0), 1u);
  // With plan_workers: 64 planes on 4 GPUs make 16 workers, each cleaning 4 planes.
  EXPECT_EQ(clean::plan_workers(64, 4, clean::automatic_parallel_per_gpu(4, 16, 4), 100), 16u);
}

class CubeThreads : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const auto r = run_gpuclean(*dir_, "simulate --size 64 --sources 5 --seed 11 --channels 7 --bandwidth 3e8 "
                                       "--name obs --out " + dir_->file("sim"));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string prefix() { return dir_->file("sim/obs"); }

  static app::RunOptions options(int threads, const std::string& out) {
    app::RunOptions o;
    o.dirty = prefix();
    o.output = out;
    o.cube.wsclean_channels = true;
    o.settings.device = clean::Device::kCpu;
    o.settings.threads = threads;
    o.verbosity = app::Verbosity::kQuiet;
    return o;
  }
  static app::CubeInput load(const app::RunOptions& o) { return app::load_cube_input(o, app::Log(o.verbosity, false)); }

  // A run's result without cleaning: every plane its own group, with images made from its dirty.
  static app::CubeRunResult fake_run(const app::CubeInput& in) {
    app::CubeRunResult run;
    run.device = "cpu";
    for (std::size_t i = 0; i < in.planes.size(); ++i) {
      run.groups.push_back({{i}});
      clean::CleanResult r;
      r.images.residual = r.images.model = r.images.restored = in.planes[i].dirty;
      for (float& v : r.images.model.pixels) v *= 0.5f;
      for (float& v : r.images.restored.pixels) v += static_cast<float>(i);
      run.results.push_back(std::move(r));
    }
    return run;
  }

  static TempDir* dir_;
  TempDir tmp_;
};
TempDir* CubeThreads::dir_ = nullptr;

// The cards that differ between any two runs: the file's creation date and the checksums over it.
bool varies(const std::string& card) {
  const std::string key = io::FitsHeader::keyword_of(card);
  return key == "DATE" || key == "CHECKSUM" || key == "DATASUM";
}

TEST_F(CubeThreads, ParallelReadAndWriteEqualTheSerialOnes) {
  const app::CubeInput one = load(options(1, "")), many = load(options(4, ""));
  ASSERT_EQ(one.planes.size(), 7u);
  ASSERT_EQ(many.planes.size(), one.planes.size());
  EXPECT_EQ(many.inputs, one.inputs);
  for (std::size_t i = 0; i < one.planes.size(); ++i) {
    const app::InputPlane &a = one.planes[i], &b = many.planes[i];
    EXPECT_EQ(a.channel, b.channel);
    EXPECT_EQ(a.frequency_hz, b.frequency_hz) << i;
    EXPECT_EQ(a.weight, b.weight) << i;
    EXPECT_EQ(a.dirty.pixels, b.dirty.pixels) << i;
    EXPECT_EQ(a.psf.image.pixels, b.psf.image.pixels) << i;
    EXPECT_EQ(a.beam.cxx, b.beam.cxx) << i;
    EXPECT_EQ(a.beam.cxy, b.beam.cxy) << i;
    EXPECT_EQ(a.header.cards(), b.header.cards()) << i;
  }
  // The same planes written with 1 and with 4 threads: the same files, pixels and cards.
  const std::string out1 = tmp_.file("one"), out4 = tmp_.file("four");
  app::write_cube_outputs(options(1, out1), one, fake_run(one));
  app::write_cube_outputs(options(4, out4), one, fake_run(one));
  const io::WscleanChannelSet set = io::find_wsclean_channels(prefix());
  std::size_t files = 0;
  for (int c = -1; c < static_cast<int>(set.channels); ++c) {
    for (const char* kind : {"image", "model", "residual"}) {
      const io::FitsImage a = io::read_fits_image(io::wsclean_name(out1, c, "", kind));
      const io::FitsImage b = io::read_fits_image(io::wsclean_name(out4, c, "", kind));
      EXPECT_EQ(a.pixels, b.pixels) << c << " " << kind;
      std::vector<std::string> ca, cb;
      for (const auto& card : a.header.cards()) if (!varies(card)) ca.push_back(card);
      for (const auto& card : b.header.cards()) if (!varies(card)) cb.push_back(card);
      EXPECT_EQ(ca, cb) << c << " " << kind;
      ++files;
    }
  }
  EXPECT_EQ(files, 3u * 8u);
}

// A cube of 4 channels x 2 Stokes parameters, every plane different: read over threads, each
// plane lands at its (channel, Stokes); written over threads, each output plane is its own.
TEST_F(CubeThreads, CubePlanesKeepTheirPlaceOverThreads) {
  const std::size_t channels = 4, stokes = 2;
  const io::FitsImage first = io::read_fits_image(prefix() + "-0000-dirty.fits");
  io::FitsCube layout;
  layout.width = first.width;
  layout.height = first.height;
  layout.channels = channels;
  layout.stokes = stokes;
  layout.axes = {static_cast<long>(first.width), static_cast<long>(first.height), static_cast<long>(channels),
                 static_cast<long>(stokes)};
  layout.stokes_codes = {1, 4};
  io::FitsHeader h = first.header;
  h.set_string("CTYPE3", "FREQ");
  h.set_double("CRPIX3", 1.0);
  h.set_double("CRVAL3", 1.3e9);
  h.set_double("CDELT3", 5e7);
  h.set_string("CTYPE4", "STOKES");
  h.set_double("CRPIX4", 1.0);
  h.set_double("CRVAL4", 1.0);
  h.set_double("CDELT4", 3.0);
  for (std::size_t c = 0; c < channels; ++c) {
    layout.frequencies_hz.push_back(1.3e9 + 5e7 * static_cast<double>(c));
    layout.channel_widths_hz.push_back(5e7);
  }
  // Plane (c, s) is simulated channel 3 s + c; its PSF channel c's.
  auto file = [](std::size_t k, const char* kind) {
    char name[32];
    std::snprintf(name, sizeof name, "-%04zu-%s.fits", k, kind);
    return prefix() + name;
  };
  std::vector<float> dirty, psf;
  for (std::size_t s = 0; s < stokes; ++s)
    for (std::size_t c = 0; c < channels; ++c) {
      const io::FitsImage d = io::read_fits_image(file(3 * s + c, "dirty")), p = io::read_fits_image(file(c, "psf"));
      dirty.insert(dirty.end(), d.pixels.begin(), d.pixels.end());
      psf.insert(psf.end(), p.pixels.begin(), p.pixels.end());
    }
  const std::string dirty_path = tmp_.file("d.fits"), psf_path = tmp_.file("p.fits");
  io::write_fits_cube(dirty_path, layout, dirty.data(), h, {}, io::WriteOptions{});
  io::write_fits_cube(psf_path, layout, psf.data(), h, {}, io::WriteOptions{});
  for (int threads : {1, 5}) {
    app::RunOptions o = options(threads, tmp_.file("out" + std::to_string(threads) + ".fits"));
    o.cube.wsclean_channels = false;
    o.dirty = dirty_path;
    o.psf = psf_path;
    o.model = tmp_.file("model" + std::to_string(threads) + ".fits");
    const app::CubeInput in = load(o);
    ASSERT_EQ(in.planes.size(), channels * stokes);
    for (std::size_t s = 0; s < stokes; ++s)
      for (std::size_t c = 0; c < channels; ++c) {
        EXPECT_EQ(in.plane(c, s).dirty.pixels, io::read_fits_image(file(3 * s + c, "dirty")).pixels) << c << "," << s;
        EXPECT_EQ(in.plane(c, s).pol, s == 0 ? "I" : "V");
      }
    const app::CubeRunResult run = fake_run(in);
    app::write_cube_outputs(o, in, run);
    const io::FitsCube restored = io::read_fits_cube(o.output), model = io::read_fits_cube(o.model);
    for (std::size_t i = 0; i < in.planes.size(); ++i) {
      const app::InputPlane& p = in.planes[i];
      const std::size_t n = layout.width * layout.height;
      EXPECT_TRUE(std::equal(run.results[i].images.restored.pixels.begin(), run.results[i].images.restored.pixels.end(),
                             restored.plane(p.channel, p.stokes), restored.plane(p.channel, p.stokes) + n)) << i;
      EXPECT_TRUE(std::equal(run.results[i].images.model.pixels.begin(), run.results[i].images.model.pixels.end(),
                             model.plane(p.channel, p.stokes), model.plane(p.channel, p.stokes) + n)) << i;
    }
  }
}

TEST_F(CubeThreads, TheFirstBrokenChannelIsNamedWhateverTheThreads) {
  // A copy of the set with channels 2 and 5 cut short: channel 2's file is the one named.
  const std::string sim = tmp_.file("sim");
  fs::copy(dir_->file("sim"), sim);
  const std::string p = sim + "/obs";
  for (const char* name : {"obs-0002-dirty.fits", "obs-0005-psf.fits"}) fs::resize_file(sim + "/" + name, 5000);
  std::string serial;
  for (int threads : {1, 4, 7, 4, 7}) {
    app::RunOptions o = options(threads, "");
    o.dirty = p;
    try {
      load(o);
      ADD_FAILURE() << "no exception";
    } catch (const std::exception& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("obs-0002-dirty.fits"), std::string::npos) << what;
      if (threads == 1) serial = what;
      EXPECT_EQ(what, serial);
    }
  }
}

TEST_F(CubeThreads, AFailedOutputLeavesNone) {
  const app::RunOptions o = options(4, tmp_.file("out"));
  app::CubeInput in = load(o);
  // Staging fails (as on a full disk), before any file is written.
  ::setenv("GPUCLEAN_TEST_FAIL_OUTPUT", "out-0004-model.fits", 1);
  EXPECT_THROW(app::write_cube_outputs(o, in, fake_run(in)), std::exception);
  ::unsetenv("GPUCLEAN_TEST_FAIL_OUTPUT");
  EXPECT_TRUE(fs::is_empty(tmp_.path())) << "outputs or staged files were left";
  // Channel 4's writing fails while the other channels' are written on other threads.
  in.planes[4].axes = {1, 1};
  EXPECT_THROW(app::write_cube_outputs(o, in, fake_run(in)), std::exception);
  EXPECT_TRUE(fs::is_empty(tmp_.path())) << "outputs or staged files were left";
}

}  // namespace

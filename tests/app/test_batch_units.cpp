// Batch mode's parts on their own: manifest parsing, sharding and its environment, device
// assignment, the bounded queue, progress text, quick-look scaling and the comparison report.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "app/batch/bounded_queue.hpp"
#include "app/batch/manifest.hpp"
#include "app/batch/progress.hpp"
#include "app/batch/shard.hpp"
#include "app/batch/streams.hpp"
#include "app/compare/select_chart.hpp"
#include "app/compare/select_report.hpp"
#include "app/quicklook.hpp"
#include "clean/errors.hpp"
#include "io/png_writer.hpp"
#include "tests/support/temp_dir.hpp"

namespace app = gpuclean::app;
using gpuclean::clean::InvalidSettings;
using gpuclean::test::TempDir;

namespace {

app::Environment env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    const auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST(Manifest, ParsesCsvWithQuotesCommentsAndBlankLines) {
  const auto t = app::parse_manifest(
      "\xEF\xBB\xBF# observations of 2026\nDirty, PSF ,out,--auto_threshold\n\n"
      "a.fits,\"p,1.fits\",o.fits,5\n# skipped\n\"b \"\"x\"\".fits\",p.fits,o2.fits,\r\n",
      "m.csv");
  ASSERT_EQ(t.columns, (std::vector<std::string>{"dirty", "psf", "out", "auto-threshold"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].line, 4u);
  EXPECT_EQ(t.rows[0].cells, (std::vector<std::string>{"a.fits", "p,1.fits", "o.fits", "5"}));
  EXPECT_EQ(t.rows[1].cells, (std::vector<std::string>{"b \"x\".fits", "p.fits", "o2.fits", ""}));
  EXPECT_EQ(t.rows[1].line, 6u);
}

TEST(Manifest, ParsesTsv) {
  const auto t = app::parse_manifest("dirty\tpsf\tout\tgain\na,b.fits\tp.fits\to.fits\t0.05\n", "m.tsv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].cells[0], "a,b.fits");  // a comma is data in TSV
  EXPECT_EQ(t.rows[0].cells[3], "0.05");
}

TEST(Manifest, RejectsBadTablesWithTheLine) {
  try {
    app::parse_manifest("dirty,psf,out\na.fits,p.fits\n", "m.csv");
    FAIL() << "a short row was accepted";
  } catch (const InvalidSettings& e) {
    EXPECT_NE(std::string(e.what()).find("m.csv line 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(app::parse_manifest("dirty,psf,dirty\n", "m.csv"), InvalidSettings);
  EXPECT_THROW(app::parse_manifest("dirty,psf,out\n\"a.fits,p.fits,o.fits\n", "m.csv"), InvalidSettings);
  EXPECT_THROW(app::parse_manifest("# only a comment\n", "m.csv"), InvalidSettings);
}

TEST(Manifest, RowsOverrideTheBatchDefaults) {
  TempDir d;
  write(d.file("m.csv"),
        "name,dirty,psf,out,gain,no-negative,beam-shape,model\n"
        "one,d1.fits,p1.fits,out/one-image.fits,,true,,\n"
        "two,d2.fits,p2.fits,/abs/two.fits,0.05,false,10 8 30,m2.fits\n");
  app::BatchOptions b;
  b.manifest = d.file("m.csv");
  b.defaults.settings.gain = 0.2;
  b.defaults.settings.niter = 77;
  b.quicklook = true;
  const auto jobs = app::load_jobs(b);
  ASSERT_EQ(jobs.size(), 2u);
  const auto& one = jobs[0].options;
  EXPECT_EQ(jobs[0].name, "one");
  EXPECT_EQ(one.dirty, d.file("d1.fits"));  // relative to the manifest's folder
  EXPECT_EQ(one.output, d.file("out/one-image.fits"));
  EXPECT_EQ(one.model, d.file("out/one-model.fits"));
  EXPECT_EQ(one.residual, d.file("out/one-residual.fits"));
  EXPECT_EQ(one.quicklook, d.file("out/one-image.png"));
  EXPECT_DOUBLE_EQ(one.settings.gain, 0.2);
  EXPECT_EQ(one.settings.niter, 77u);
  EXPECT_FALSE(one.settings.allow_negative);
  const auto& two = jobs[1].options;
  EXPECT_EQ(two.output, "/abs/two.fits");
  EXPECT_EQ(two.model, d.file("m2.fits"));
  EXPECT_EQ(two.residual, "/abs/two-residual.fits");
  EXPECT_DOUBLE_EQ(two.settings.gain, 0.05);
  EXPECT_TRUE(two.settings.allow_negative);
  ASSERT_TRUE(two.settings.beam_shape.has_value());
  EXPECT_DOUBLE_EQ(two.settings.beam_shape->bpa_deg, 30.0);
}

TEST(Manifest, RefusesUnknownColumnsBadValuesAndSharedOutputs) {
  TempDir d;
  app::BatchOptions b;
  b.manifest = d.file("m.csv");
  auto message = [&](const std::string& text) {
    write(b.manifest, text);
    try {
      app::load_jobs(b);
    } catch (const InvalidSettings& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("dirty,psf,out,gian\na,b,c.fits,0.1\n").find("column 'gian' is not an option"), std::string::npos);
  EXPECT_NE(message("dirty,psf,out,gain\na,b,c.fits,x\na,b,d.fits,0.1\n").find("line 2"), std::string::npos);
  EXPECT_NE(message("dirty,psf,out,gain\na,b,c.fits,0.1\na,b,d.fits,7\n").find("line 3"), std::string::npos);
  EXPECT_NE(message("dirty,psf,out\na,b,c.fits\nx,y,c.fits\n").find("would both write"), std::string::npos);
  EXPECT_NE(message("dirty,psf,out\na,b,c.fits\nx,y,a\n").find("an input"), std::string::npos);
  EXPECT_NE(message("dirty,psf\na,b\n").find("no 'out' column"), std::string::npos);
  EXPECT_NE(message("dirty,psf,out,no-negative\na,b,c.fits,maybe\n").find("is a flag"), std::string::npos);
  EXPECT_NE(message("dirty,psf,out,json\na,b,c.fits,-\n").find("cannot be used in batch"), std::string::npos);
}

TEST(Manifest, FolderTakesWsCleanPairs) {
  TempDir d;
  for (const char* f : {"b-dirty.fits", "b-psf.fits", "a-0001-dirty.fits", "a-0001-psf.fits", "c-dirty.fits", "x.fits"})
    write(d.file(f), "");
  app::BatchOptions b;
  b.manifest = d.path().string();
  b.out_dir = d.file("out");
  const auto jobs = app::load_jobs(b);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].name, "a-0001");
  EXPECT_EQ(jobs[0].options.output, d.file("out/a-0001-image.fits"));
  EXPECT_EQ(jobs[0].options.model, d.file("out/a-0001-model.fits"));
  EXPECT_EQ(jobs[0].options.residual, d.file("out/a-0001-residual.fits"));
  EXPECT_TRUE(jobs[0].error.empty());
  EXPECT_EQ(jobs[2].name, "c");
  EXPECT_EQ(jobs[2].index, 2u);
  EXPECT_NE(jobs[2].error.find("no PSF"), std::string::npos);  // reported as a failed observation
}

TEST(Manifest, DerivedOutputNames) {
  const auto a = app::derived_outputs("/x/obs-image.fits");
  EXPECT_EQ(a.model, "/x/obs-model.fits");
  EXPECT_EQ(a.residual, "/x/obs-residual.fits");
  EXPECT_EQ(a.quicklook, "/x/obs-image.png");
  const auto b = app::derived_outputs("clean.fits");
  EXPECT_EQ(b.model, "clean-model.fits");
  EXPECT_EQ(b.quicklook, "clean.png");
}

TEST(Shard, EveryObservationIsTakenByExactlyOneShard) {
  for (std::size_t n = 1; n <= 9; ++n) {
    for (std::size_t m : {0u, 1u, 5u, 8u, 9u, 64u, 257u}) {
      std::vector<int> taken(m, 0);
      for (std::size_t i = 0; i < n; ++i) {
        const app::Shard s = app::parse_shard(std::to_string(i) + "/" + std::to_string(n));
        for (std::size_t j = 0; j < m; ++j) taken[j] += app::in_shard(j, s);
      }
      for (std::size_t j = 0; j < m; ++j) ASSERT_EQ(taken[j], 1) << "observation " << j << " of " << m << ", N " << n;
    }
  }
}

TEST(Shard, ParsesAndRefusesShardText) {
  const app::Shard s = app::parse_shard("2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  for (const char* bad : {"5/5", "-1/4", "1/0", "1", "a/b", "1/2/3", "/4", "1/"})
    EXPECT_THROW(app::parse_shard(bad), InvalidSettings) << bad;
}

TEST(Shard, ReadsSlurmArrays) {
  auto s = app::resolve_shard("", env_of({{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_COUNT", "4"},
                                          {"SLURM_ARRAY_TASK_MIN", "5"}, {"SLURM_ARRAY_TASK_MAX", "8"}}));
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.source, "Slurm array");
  // --array=1-7:2 -> tasks 1, 3, 5, 7.
  s = app::resolve_shard("", env_of({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "4"},
                                     {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_STEP", "2"}}));
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 4u);
  // A Slurm job that is not an array is not split.
  s = app::resolve_shard("", env_of({{"SLURM_JOB_ID", "99"}, {"SLURM_PROCID", "0"}}));
  EXPECT_EQ(s.count, 1u);
  // --array=1,5,9 is not evenly spaced from its minimum.
  EXPECT_THROW(app::resolve_shard("", env_of({{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "3"},
                                              {"SLURM_ARRAY_TASK_MIN", "1"}})),
               InvalidSettings);
  EXPECT_THROW(app::resolve_shard("", env_of({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "3"}})),
               InvalidSettings);
  EXPECT_THROW(app::resolve_shard("", env_of({{"SLURM_ARRAY_TASK_ID", "1"}})), InvalidSettings);
}

TEST(Shard, ReadsMpiLaunchers) {
  auto s = app::resolve_shard("", env_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}}));
  EXPECT_EQ(s.index, 3u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.source, "MPI (Open MPI)");
  s = app::resolve_shard("", env_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}));
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.source, "MPI (PMI)");
  EXPECT_THROW(app::resolve_shard("", env_of({{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}})), InvalidSettings);
  EXPECT_THROW(app::resolve_shard("", env_of({{"OMPI_COMM_WORLD_RANK", "0"}})), InvalidSettings);
}

TEST(Shard, CombinesAnArrayOfMpiJobsAndLetsTheCommandLineWin) {
  const auto env = env_of({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"},
                           {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  auto s = app::resolve_shard("", env);
  EXPECT_EQ(s.index, 3u);  // array task 1 of 3, rank 1 of 2
  EXPECT_EQ(s.count, 6u);
  s = app::resolve_shard("0/2", env);
  EXPECT_EQ(s.index, 0u);
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.source, "--shard");
  // Every (task, rank) pair gets its own shard.
  std::set<std::size_t> seen;
  for (int t = 0; t < 3; ++t)
    for (int r = 0; r < 2; ++r)
      seen.insert(app::resolve_shard("", env_of({{"SLURM_ARRAY_TASK_ID", std::to_string(t)},
                                                 {"SLURM_ARRAY_TASK_COUNT", "3"},
                                                 {"PMI_RANK", std::to_string(r)}, {"PMI_SIZE", "2"}}))
                      .index);
  EXPECT_EQ(seen.size(), 6u);
}

TEST(Devices, RanksOnANodeShareItsGpus) {
  EXPECT_EQ(app::devices_for(4, {}, 0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(app::devices_for(4, {}, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(app::devices_for(4, {1, 2}, 0), (std::vector<int>{1, 3}));
  EXPECT_EQ(app::devices_for(2, {3, 4}, 0), (std::vector<int>{1}));
  EXPECT_TRUE(app::devices_for(0, {}, 0).empty());
  const auto env = env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_EQ(app::local_rank(env).rank, 1);
  EXPECT_EQ(app::local_rank(env).size, 2);
  EXPECT_EQ(app::local_rank(env_of({})).size, 1);
}

TEST(Streams, AutomaticNumberFollowsMemoryMultiprocessorsAndCores) {
  constexpr std::size_t GiB = std::size_t{1} << 30;
  std::string why;
  // An H100 or H200 with 128 cores to itself: 132 SMs allow 8; 79 GiB free hold far more streams of 0.5 GiB.
  EXPECT_EQ(app::automatic_streams(79 * GiB, GiB / 2, 132, 128, &why), 8);
  EXPECT_NE(why.find("132 SMs"), std::string::npos) << why;
  // The same GPU on a host of 16 cores: the cores allow 6.
  EXPECT_EQ(app::automatic_streams(79 * GiB, GiB / 2, 132, 16, &why), 6);
  EXPECT_NE(why.find("16 cores"), std::string::npos) << why;
  // Memory decides: 80% of 10 GiB at 3 GiB each is 2.
  EXPECT_EQ(app::automatic_streams(10 * GiB, 3 * GiB, 132, 128), 2);
  // A small GPU: 40 SMs allow 2.
  EXPECT_EQ(app::automatic_streams(79 * GiB, GiB, 40, 128), 2);
  // Never below 1, even when one stream does not fit, the host has 2 cores or nothing is known.
  EXPECT_EQ(app::automatic_streams(GiB, 4 * GiB, 132, 128), 1);
  EXPECT_EQ(app::automatic_streams(79 * GiB, GiB, 132, 2), 1);
  EXPECT_EQ(app::automatic_streams(0, 0, 0, 0), 1);
  // Never above the automatic maximum, however large the GPU and host.
  EXPECT_EQ(app::automatic_streams(1000 * GiB, GiB, 1000, 1000), app::kMaxAutomaticStreams);
  EXPECT_LE(app::kMaxAutomaticStreams, app::kMaxStreamsPerGpu);
}

TEST(Streams, AutomaticIoThreads) {
  EXPECT_EQ(app::automatic_io_threads(1, 2), 1);    // the CPU worker on this machine
  EXPECT_EQ(app::automatic_io_threads(1, 16), 1);
  EXPECT_EQ(app::automatic_io_threads(6, 16), 6);   // six streams on one H200 host: one reader and writer each
  EXPECT_EQ(app::automatic_io_threads(8, 8), 4);    // at most half the cores
  EXPECT_EQ(app::automatic_io_threads(4, 0), 1);    // nothing known of the cores
  // No fixed cap: 4 H100s with 6 streams each on 64 cores get 24 (55.7 observations/s with 8,
  // 64.1 with 16 measured there); half the cores still bound it.
  EXPECT_EQ(app::automatic_io_threads(24, 64), 24);
  EXPECT_EQ(app::automatic_io_threads(16, 128), 16);
  EXPECT_EQ(app::automatic_io_threads(64, 256), 64);
  EXPECT_EQ(app::automatic_io_threads(64, 64), 32);
}

TEST(Streams, IoThreadsShareTheCoresInTheirOpenMpTeams) {
  EXPECT_EQ(app::io_openmp_team(1, 2), 1);    // this machine: one reader and one writer
  EXPECT_EQ(app::io_openmp_team(2, 64), 16);
  EXPECT_EQ(app::io_openmp_team(24, 64), 1);  // 4 GPUs x 6 streams on 64 cores
  EXPECT_EQ(app::io_openmp_team(0, 0), 1);
}

TEST(BoundedQueue, NeverHoldsMoreThanItsCapacityAndDeliversEverything) {
  app::BoundedQueue<int> q(3);
  std::atomic<int> inside{0}, most{0};
  std::vector<int> got;
  std::thread consumer([&] {
    while (auto v = q.pop()) {
      got.push_back(*v);
      --inside;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  for (int i = 0; i < 500; ++i) {
    ++inside;
    ASSERT_TRUE(q.push(i));
    most = std::max(most.load(), inside.load());
  }
  q.close();
  consumer.join();
  ASSERT_EQ(got.size(), 500u);
  for (int i = 0; i < 500; ++i) ASSERT_EQ(got[i], i);
  EXPECT_LE(most.load(), 3 + 1 + 1);  // the queue, the one being consumed, the one being pushed
  EXPECT_FALSE(q.push(1));            // closed
}

TEST(Progress, BarAndClock) {
  EXPECT_EQ(app::Progress::clock(75), "1:15");
  EXPECT_EQ(app::Progress::clock(3725), "1:02:05");
  EXPECT_EQ(app::Progress::clock(NAN), "--:--");
  std::FILE* sink = std::tmpfile();
  app::Progress p(4, false, app::Verbosity::kNormal, sink);
  app::ObservationOutcome o;
  o.status = app::OutcomeStatus::kDone;
  p.record(o);
  o.status = app::OutcomeStatus::kFailed;
  p.record(o);
  const std::string bar = p.bar_line();
  EXPECT_NE(bar.find("2/4"), std::string::npos) << bar;
  EXPECT_NE(bar.find("1 failed"), std::string::npos) << bar;
  EXPECT_NE(bar.find("ETA"), std::string::npos) << bar;
  std::fclose(sink);
}

TEST(Quicklook, ScalesLinearlyFlipsAndHidesNan) {
  gpuclean::clean::HostImage im(3, 2);
  im.pixels = {-1.0f, 0.0f, 0.5f, 1.0f, 2.0f, NAN};  // row y = 0 is the bottom
  const auto px = app::quicklook_pixels(im, {0.0f, 1.0f, 1, 99});
  ASSERT_EQ(px.pixels.size(), 12u);
  auto grey = [&](int x, int row) { return px.pixels[2 * (row * 3 + x)]; };
  auto alpha = [&](int x, int row) { return px.pixels[2 * (row * 3 + x) + 1]; };
  EXPECT_EQ(grey(0, 1), 0);    // -1 clamps to black (FITS row 0 -> PNG row 1)
  EXPECT_EQ(grey(1, 1), 0);
  EXPECT_EQ(grey(2, 1), 128);  // 0.5 -> 127.5 rounds up
  EXPECT_EQ(grey(0, 0), 255);
  EXPECT_EQ(grey(1, 0), 255);  // 2 clamps to white
  EXPECT_EQ(alpha(2, 0), 0);   // NaN
  EXPECT_EQ(alpha(0, 0), 255);
  TempDir d;
  app::write_quicklook(d.file("q.png"), im, {0.0f, 1.0f, 1, 99}, "test", false);
  const auto back = gpuclean::io::decode_png_grey_alpha(d.file("q.png"));
  EXPECT_EQ(back.width, 3u);
  EXPECT_EQ(back.pixels, px.pixels);
  EXPECT_ANY_THROW(app::write_quicklook(d.file("q.png"), im, {0.0f, 1.0f, 1, 99}, "test", false));  // no overwrite
}

TEST(SelectComparison, TableCsvJsonAndChart) {
  std::vector<gpuclean::clean::SelectCycleComparison> cycles(3);
  for (std::size_t i = 0; i < 3; ++i) {
    cycles[i].cycle = i + 1;
    cycles[i].n = 1000;
    cycles[i].k = 50;
    cycles[i].count = 50;
    cycles[i].times = {{"sort", 4e-3}, {"randomized", 1e-3 * (i + 1)}, {"bucket", 2e-3}};
  }
  const app::SelectComparisonTable t(cycles);
  ASSERT_EQ(t.backends(), (std::vector<std::string>{"sort", "randomized", "bucket"}));
  EXPECT_NEAR(t.total_seconds(1), 6e-3, 1e-12);
  EXPECT_NEAR(t.speedup_over_sort(1), 12e-3 / 6e-3, 1e-9);
  EXPECT_NEAR(t.speedup_over_sort(0), 1.0, 1e-12);
  const std::string csv = t.csv();
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 9);
  EXPECT_NE(csv.find("2,1000,50,50,randomized,0.002,2"), std::string::npos) << csv;
  const auto j = t.json();
  EXPECT_EQ(j["cycles"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["speedup_over_sort"]["bucket"].get<double>(), 2.0);
  TempDir d;
  app::write_select_chart(d.file("c.png"), t, "test", false);
  const auto png = gpuclean::io::decode_png_grey_alpha(d.file("c.png"));
  EXPECT_EQ(png.width, 960u);
  EXPECT_EQ(png.height, 540u);
  // Not blank: lines and text were drawn.
  std::size_t dark = 0;
  for (std::size_t i = 0; i < png.pixels.size(); i += 2) dark += png.pixels[i] < 128;
  EXPECT_GT(dark, 1000u);
}

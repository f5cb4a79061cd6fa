// gpuclean batch and the single command's new outputs, run as users run them: folders and
// manifests, failures, --resume, sharding by flag, Slurm and a real mpirun, quick-look PNGs,
// channel sets with the cube options, and --compare-select (on a GPU).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "app/summary/summary_schema.hpp"
#include "io/fits_reader.hpp"
#include "io/png_writer.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using gpuclean::test::TempDir;
using nlohmann::json;

namespace {

using Result = gpuclean::test::CommandResult;
using gpuclean::test::slurp;
Result run(const TempDir& dir, const std::string& command) { return gpuclean::test::run_command(dir, command); }

std::string gpuclean_cmd(const std::string& args) { return gpuclean::test::binary_path() + " " + args; }

// Three small simulated observations named as WSClean names them; the fields are made once.
class Batch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fields_ = new TempDir();
    for (int i = 0; i < 3; ++i) {
      const Result r = run(*fields_, gpuclean_cmd("simulate --size 96 --sources 6 --seed " + std::to_string(10 + i) +
                                                  " --out " + fields_->file("f" + std::to_string(i))));
      ASSERT_EQ(r.code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { delete fields_; }

  // A folder with obs0..obs2 (and any extra names given a junk dirty image).
  fs::path make_folder(const std::string& name, int count = 3) const {
    const fs::path d = tmp_.path() / name;
    fs::create_directories(d);
    for (int i = 0; i < count; ++i) {
      fs::copy_file(fields_->file("f" + std::to_string(i % 3) + "/dirty.fits"), d / ("obs" + std::to_string(i) + "-dirty.fits"));
      fs::copy_file(fields_->file("f" + std::to_string(i % 3) + "/psf.fits"), d / ("obs" + std::to_string(i) + "-psf.fits"));
    }
    return d;
  }
  static std::string field(int i, const char* file) { return fields_->file("f" + std::to_string(i) + "/" + file); }

  static json report(const fs::path& p) { return json::parse(slurp(p.string())); }
  static std::set<std::string> names_with(const json& r, const char* status) {
    std::set<std::string> s;
    for (const auto& o : r["observations"])
      if (o["status"] == status) s.insert(o["name"].get<std::string>());
    return s;
  }

  static TempDir* fields_;
  TempDir tmp_;
};
TempDir* Batch::fields_ = nullptr;

}  // namespace

TEST_F(Batch, FolderRunsEveryPairReportsFailuresAndSaysSoInTheExitCode) {
  const fs::path d = make_folder("in");
  std::ofstream(d / "broken-dirty.fits") << "not FITS";
  fs::copy_file(d / "obs0-psf.fits", d / "broken-psf.fits");
  const Result r = run(tmp_, gpuclean_cmd("batch " + d.string() + " --quicklook"));
  EXPECT_EQ(r.code, 5) << r.out << r.err;
  EXPECT_NE(r.err.find("1 of 4 observations failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("broken: FAILED"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("observation"), std::string::npos) << r.out;  // the summary table

  const json rep = report(d / "gpuclean-batch.json");
  EXPECT_EQ(gpuclean::app::summary_schema_problems(rep), std::vector<std::string>{}) << rep.dump(1);
  EXPECT_EQ(rep["front_end"], "batch");
  ASSERT_EQ(rep["observations"].size(), 4u);
  EXPECT_EQ(names_with(rep, "done"), (std::set<std::string>{"obs0", "obs1", "obs2"}));
  EXPECT_EQ(names_with(rep, "failed"), (std::set<std::string>{"broken"}));
  for (const auto& o : rep["observations"]) {
    if (o["status"] == "failed") {
      EXPECT_EQ(o["exit_code"], 3);
      EXPECT_NE(o["reason"].get<std::string>().find("not a readable FITS"), std::string::npos);
      continue;
    }
    ASSERT_EQ(o["runs"].size(), 1u);
    ASSERT_EQ(o["planes"].size(), 1u);
    EXPECT_GT(o["runs"][0]["iterations"].get<int>(), 0);
    EXPECT_GT(o["planes"][0]["rms_residual"].get<double>(), 0.0);
    EXPECT_GT(o["planes"][0]["model_flux"].get<double>(), 0.0);
    EXPECT_GT(o["seconds"]["total"].get<double>(), 0.0);
    // The stages CLEAN timed lie inside its clean time, and its minor cycles took some of it.
    const auto& stages = o["runs"][0]["stage_seconds"];
    double staged = 0.0;
    for (const char* k : {"setup", "select", "minor", "convolve", "download"}) staged += stages[k].get<double>();
    EXPECT_GT(stages["minor"].get<double>(), 0.0);
    EXPECT_LE(staged, o["seconds"]["clean"].get<double>() + o["seconds"]["restore"].get<double>() + 1e-3);
    for (const auto& out : o["outputs"]) EXPECT_TRUE(fs::exists(out.get<std::string>())) << out;
  }
  EXPECT_EQ(rep["totals"]["done"], 3);
  EXPECT_EQ(rep["totals"]["failed"], 1);
  EXPECT_FALSE(fs::exists(d / "broken-image.fits"));

  // The batch's images are the single command's.
  const Result single = run(tmp_, gpuclean_cmd(field(1, "dirty.fits") + " " + field(1, "psf.fits") + " -o " +
                                               tmp_.file("single.fits") + " -q"));
  ASSERT_EQ(single.code, 0) << single.err;
  const auto a = gpuclean::io::read_fits_image(tmp_.file("single.fits"));
  const auto b = gpuclean::io::read_fits_image((d / "obs1-image.fits").string());
  ASSERT_EQ(a.pixels.size(), b.pixels.size());
  double worst = 0, peak = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(a.pixels[i] - b.pixels[i])));
    peak = std::max(peak, static_cast<double>(std::fabs(a.pixels[i])));
  }
  EXPECT_LE(worst, 1e-6 * peak);
}

TEST_F(Batch, ResumeSkipsCompleteObservationsAndRedoesCutOnes) {
  const fs::path d = make_folder("in");
  ASSERT_EQ(run(tmp_, gpuclean_cmd("batch " + d.string() + " -q")).code, 0);
  fs::resize_file(d / "obs1-model.fits", 5000);  // as if killed while copying
  fs::remove(d / "obs2-image.fits");
  const Result r = run(tmp_, gpuclean_cmd("batch " + d.string() + " --resume"));
  ASSERT_EQ(r.code, 0) << r.err;
  const json rep = report(d / "gpuclean-batch.json");
  EXPECT_EQ(names_with(rep, "skipped"), (std::set<std::string>{"obs0"}));
  EXPECT_EQ(names_with(rep, "done"), (std::set<std::string>{"obs1", "obs2"}));
  EXPECT_TRUE(gpuclean::io::fits_file_complete((d / "obs1-model.fits").string()));
  EXPECT_TRUE(fs::exists(d / "obs2-image.fits"));
  // Without --resume, existing outputs are refused per observation (never overwritten).
  const Result again = run(tmp_, gpuclean_cmd("batch " + d.string()));
  EXPECT_EQ(again.code, 5);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
}

TEST_F(Batch, AnObservationWhoseLastOutputFailsLeavesNoneOfItsOutputs) {
  // Writing obs1's restored image fails (as on a full disk; a test seam): its model and residual,
  // already written, must go too, while obs0 is whole.
  const fs::path d = make_folder("in", 2);
  const Result r = run(tmp_, "GPUCLEAN_TEST_FAIL_OUTPUT=obs1-image.fits " + gpuclean_cmd("batch " + d.string() + " -q"));
  EXPECT_EQ(r.code, 5) << r.out << r.err;
  const json rep = report(d / "gpuclean-batch.json");
  EXPECT_EQ(names_with(rep, "done"), (std::set<std::string>{"obs0"}));
  EXPECT_EQ(names_with(rep, "failed"), (std::set<std::string>{"obs1"}));
  for (const char* f : {"obs0-image.fits", "obs0-model.fits", "obs0-residual.fits"}) EXPECT_TRUE(fs::exists(d / f)) << f;
  std::string left;
  for (const auto& e : fs::directory_iterator(d)) {
    const std::string name = e.path().filename().string();
    if (name.find("obs1") != std::string::npos && name != "obs1-dirty.fits" && name != "obs1-psf.fits") left += name + " ";
  }
  EXPECT_TRUE(left.empty()) << "left behind: " << left;
}

TEST_F(Batch, ManifestRowsCarryTheirOwnOptions) {
  std::ofstream(tmp_.file("m.csv")) << "name,dirty,psf,out,gain,niter,json\n"
                                    << "a," << field(0, "dirty.fits") << "," << field(0, "psf.fits")
                                    << ",out/a.fits,0.05,,a.json\n"
                                    << "b," << field(1, "dirty.fits") << "," << field(1, "psf.fits")
                                    << ",out/b.fits,,7,b.json\n";
  fs::create_directories(tmp_.path() / "out");
  const Result r = run(tmp_, gpuclean_cmd("batch " + tmp_.file("m.csv") + " --gain 0.2 --report " + tmp_.file("r.json")));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json a = json::parse(slurp(tmp_.file("a.json"))), b = json::parse(slurp(tmp_.file("b.json")));
  EXPECT_DOUBLE_EQ(a["settings"]["gain"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(b["settings"]["gain"].get<double>(), 0.2);  // the batch default
  EXPECT_EQ(b["settings"]["niter"], 7);
  EXPECT_EQ(b["runs"][0]["iterations"], 7);
  EXPECT_TRUE(fs::exists(tmp_.file("out/a-model.fits")));
  EXPECT_TRUE(fs::exists(tmp_.file("out/b-residual.fits")));
}

TEST_F(Batch, MultiscaleAutoMaskAndLocalRmsRunPerRow) {
  std::ofstream(tmp_.file("m.csv")) << "name,dirty,psf,out,noise-map,json\n"
                                    << "a," << field(0, "dirty.fits") << "," << field(0, "psf.fits")
                                    << ",a.fits,a-noise.fits,a.json\n"
                                    << "b," << field(1, "dirty.fits") << "," << field(1, "psf.fits")
                                    << ",b.fits,b-noise.fits,b.json\n";
  const Result r = run(tmp_, gpuclean_cmd("batch " + tmp_.file("m.csv") +
                                          " --device cpu --multiscale --multiscale-scales 0,6 --auto-mask 6"
                                          " --auto-threshold 2 --local-rms --local-rms-window 10"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const char* name : {"a", "b"}) {
    const json j = json::parse(slurp(tmp_.file(std::string(name) + ".json")));
    const json& run = j["runs"][0];
    EXPECT_EQ(j["settings"]["algorithm"], "multiscale");
    ASSERT_TRUE(run["local_rms"].is_object()) << name;
    EXPECT_EQ(run["local_rms"]["window_beams"], 10.0);
    ASSERT_TRUE(run["auto_mask"].is_object()) << name;
    EXPECT_EQ(run["local_rms"]["dropped_at_cycle"], run["auto_mask"]["cycle"]) << name;
    EXPECT_TRUE(fs::exists(tmp_.file(std::string(name) + "-noise.fits"))) << name;
  }
}

TEST_F(Batch, BadManifestStopsBeforeAnyWork) {
  std::ofstream(tmp_.file("m.csv")) << "dirty,psf,out,gain\n"
                                    << field(0, "dirty.fits") << "," << field(0, "psf.fits") << ",a.fits,0.1\n"
                                    << field(1, "dirty.fits") << "," << field(1, "psf.fits") << ",b.fits,2\n";
  const Result r = run(tmp_, gpuclean_cmd("batch " + tmp_.file("m.csv")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("line 3"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(tmp_.file("a.fits")));
}

TEST_F(Batch, StreamsPerGpuIsCheckedBeforeAnyWork) {
  const fs::path d = make_folder("in", 1);
  for (const char* bad : {"-1", "33", "many", "1.5"}) {
    const Result r = run(tmp_, gpuclean_cmd("batch " + d.string() + " --streams-per-gpu " + bad));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--streams-per-gpu"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(d / "obs0-image.fits")) << bad;
    EXPECT_FALSE(fs::exists(d / "gpuclean-batch.json")) << bad;
  }
  // On the CPU there is one worker, whatever the option says; the report says so.
  const Result r = run(tmp_, gpuclean_cmd("batch " + d.string() + " -q --device cpu --streams-per-gpu 4"));
  ASSERT_EQ(r.code, 0) << r.err;
  const json rep = report(d / "gpuclean-batch.json");
  EXPECT_EQ(rep["totals"]["workers"], json::array({"cpu"}));
  EXPECT_EQ(rep["totals"]["streams_per_gpu"], 0);
  EXPECT_GE(rep["totals"]["io_threads"].get<int>(), 1);
}

TEST_F(Batch, ShardFlagAndSlurmArraySplitTheSet) {
  const fs::path d = make_folder("in", 5);
  std::set<std::string> all;
  for (int i = 0; i < 2; ++i) {
    const Result r = run(tmp_, gpuclean_cmd("batch " + d.string() + " -q --shard " + std::to_string(i) + "/2"));
    ASSERT_EQ(r.code, 0) << r.err;
    const json rep = report(d / ("gpuclean-batch-shard-" + std::to_string(i) + "-of-2.json"));
    EXPECT_EQ(rep["shard"]["source"], "--shard");
    for (const auto& n : names_with(rep, "done")) EXPECT_TRUE(all.insert(n).second) << n << " done twice";
  }
  EXPECT_EQ(all.size(), 5u);

  const fs::path e = make_folder("slurm", 5);
  const Result r = run(tmp_, "env SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_COUNT=2 " +
                                 gpuclean_cmd("batch " + e.string() + " -q"));
  ASSERT_EQ(r.code, 0) << r.err;
  const json rep = report(e / "gpuclean-batch-shard-1-of-2.json");
  EXPECT_EQ(rep["shard"]["source"], "Slurm array");
  EXPECT_EQ(names_with(rep, "done"), (std::set<std::string>{"obs1", "obs3"}));
}

TEST_F(Batch, MpirunSplitsTheSetAcrossTwoRanks) {
  const std::string mpirun = "/usr/bin/mpirun";
  ASSERT_TRUE(fs::exists(mpirun)) << "mpirun not found: install Debian's openmpi-bin (scripts/setup.sh does)";
  const fs::path d = make_folder("in", 5);
  const std::string root = ::geteuid() == 0 ? "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " : "";
  const Result r = run(tmp_, root + mpirun + " -n 2 --oversubscribe " +
                                 gpuclean_cmd("batch " + d.string() + " --device cpu --threads 1"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::set<std::string> all;
  for (int rank = 0; rank < 2; ++rank) {
    const json rep = report(d / ("gpuclean-batch-shard-" + std::to_string(rank) + "-of-2.json"));
    EXPECT_EQ(rep["shard"]["source"], "MPI (Open MPI)");
    EXPECT_EQ(rep["totals"]["workers"], json::array({"cpu"}));
    const auto done = names_with(rep, "done");
    EXPECT_EQ(done.size(), rank == 0 ? 3u : 2u);
    for (const auto& n : done) EXPECT_TRUE(all.insert(n).second) << n << " done by both ranks";
  }
  EXPECT_EQ(all.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(fs::exists(d / ("obs" + std::to_string(i) + "-image.fits")));
}

TEST_F(Batch, QuicklookIsScaledBetweenThePercentilesOfTheRestoredImage) {
  const Result r = run(tmp_, gpuclean_cmd(field(2, "dirty.fits") + " " + field(2, "psf.fits") + " -o " +
                                          tmp_.file("r.fits") + " --quicklook " + tmp_.file("r.png") +
                                          " --quicklook-range 2 98 -q"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto restored = gpuclean::io::read_fits_image(tmp_.file("r.fits"));
  std::vector<float> finite;
  for (float v : restored.pixels)
    if (!std::isnan(v)) finite.push_back(v);
  auto at_rank = [&](double q) {
    std::vector<float> v = finite;
    const auto k = static_cast<std::size_t>(std::llround(q * static_cast<double>(v.size() - 1)));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
  };
  const double lo = at_rank(0.02), hi = at_rank(0.98);
  ASSERT_LT(lo, hi);
  const auto png = gpuclean::io::decode_png_grey_alpha(tmp_.file("r.png"));
  ASSERT_EQ(png.width, restored.width);
  ASSERT_EQ(png.height, restored.height);
  std::size_t black = 0, white = 0;
  for (std::size_t y = 0; y < restored.height; ++y) {
    for (std::size_t x = 0; x < restored.width; ++x) {
      const double v = restored.pixels[y * restored.width + x];
      const double expect = 255.0 * std::clamp((v - lo) / (hi - lo), 0.0, 1.0);
      const int got = png.pixels[2 * ((restored.height - 1 - y) * restored.width + x)];
      ASSERT_NEAR(got, expect, 0.51) << x << "," << y;
      black += got == 0;
      white += got == 255;
    }
  }
  // About 2% of the pixels lie at or beyond each end.
  const double n = static_cast<double>(finite.size());
  EXPECT_NEAR(black / n, 0.02, 0.01);
  EXPECT_NEAR(white / n, 0.02, 0.01);
}

// A folder's channel sets take the single command's cube options: joined, fitted, each with its
// own source list; bad combinations, and cube options without channel sets to take them, are
// refused with one line before any work.
TEST_F(Batch, ChannelSetsTakeTheCubeOptions) {
  const fs::path d = tmp_.path() / "sets";
  fs::create_directories(d);
  for (const std::string name : {"a", "b"}) {
    const std::string sim = tmp_.file("sim-" + name);
    const Result r = run(tmp_, gpuclean_cmd("simulate --size 64 --sources 4 --seed " + std::to_string(20 + name[0]) +
                                            " --channels 3 --bandwidth 3e8 --name " + name + " --out " + sim));
    ASSERT_EQ(r.code, 0) << r.err;
    for (const auto& e : fs::directory_iterator(sim))
      if (e.path().filename().string().rfind(name + "-", 0) == 0) fs::copy_file(e.path(), d / e.path().filename());
  }
  std::ofstream(tmp_.file("m.csv")) << "dirty,psf,out\n" << field(0, "dirty.fits") << "," << field(0, "psf.fits")
                                    << "," << tmp_.file("m-image.fits") << "\n";
  const fs::path pairs = make_folder("pairs", 1);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {d.string(), "--fit-spectral-pol 2"},
      {d.string(), "--save-source-list"},
      {d.string(), "--join-channels --join-polarizations"},
      {d.string(), "--join-channels --fit-spectral-pol 2 --fit-spectral-log-pol 2"},
      {d.string(), "--join-channels --fit-spectral-log-pol 9"},
      {d.string(), "--join-channels --algorithm hogbom"},
      {tmp_.file("m.csv"), "--join-channels"},
      {pairs.string(), "--join-channels"}};
  for (const auto& [input, opts] : refused) {
    const Result r = run(tmp_, gpuclean_cmd("batch " + input + " --device cpu " + opts));
    EXPECT_EQ(r.code, 2) << opts << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(d / "a-MFS-image.fits")) << opts;
    EXPECT_FALSE(fs::exists(d / "gpuclean-batch.json")) << opts;
    EXPECT_FALSE(fs::exists(tmp_.file("m-image.fits"))) << opts;
    EXPECT_FALSE(fs::exists(pairs / "obs0-image.fits")) << opts;
  }

  const Result r = run(tmp_, gpuclean_cmd("batch " + d.string() + " -q --device cpu --niter 300 --join-channels "
                                          "--fit-spectral-pol 2 --save-source-list"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json rep = report(d / "gpuclean-batch.json");
  ASSERT_EQ(rep["observations"].size(), 2u) << rep.dump(1);
  for (const auto& o : rep["observations"]) {
    const std::string name = o["name"];
    SCOPED_TRACE(name);
    EXPECT_EQ(o["status"], "done");
    EXPECT_EQ(o["settings"]["join"], "channels");
    const std::string list = (d / (name + "-sources.txt")).string();
    EXPECT_NE(std::find(o["outputs"].begin(), o["outputs"].end(), list), o["outputs"].end()) << o["outputs"].dump();
    EXPECT_EQ(slurp(list).rfind("Format = Name, Type, Ra, Dec, I, SpectralIndex, LogarithmicSI", 0), 0u);
    EXPECT_NE(slurp(list).find(",POINT,"), std::string::npos);
    for (const char* kind : {"image", "model", "residual"})
      EXPECT_TRUE(fs::exists(d / (name + "-MFS-" + kind + ".fits"))) << kind;
    // Joined: every channel's components at the same pixels, with that channel's own flux.
    const gpuclean::io::FitsImage m0 = gpuclean::io::read_fits_image((d / (name + "-0000-model.fits")).string());
    const gpuclean::io::FitsImage m2 = gpuclean::io::read_fits_image((d / (name + "-0002-model.fits")).string());
    std::size_t components = 0, differ = 0;
    for (std::size_t i = 0; i < m0.pixels.size(); ++i) {
      EXPECT_EQ(m0.pixels[i] != 0.0f, m2.pixels[i] != 0.0f) << i;
      components += m0.pixels[i] != 0.0f;
      differ += m0.pixels[i] != m2.pixels[i];
    }
    EXPECT_GT(components, 0u);
    EXPECT_GT(differ, 0u);
    EXPECT_EQ(m0.header.get_string("GCJOIN").value_or(""), "channels");
    EXPECT_EQ(m0.header.get_double("GCFITPOL").value_or(0.0), 2.0);
  }
}

TEST_F(Batch, CompareSelectNeedsGpuClark) {
  const Result r = run(tmp_, gpuclean_cmd(field(0, "dirty.fits") + " " + field(0, "psf.fits") + " -o " +
                                          tmp_.file("r.fits") + " --compare-select --device cpu"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--compare-select"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp_.file("r.fits")));
}

class BatchGpu : public Batch {
 protected:
  void SetUp() override {
    if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << gpuclean::cuda::describe_device();
  }
};

TEST_F(BatchGpu, CompareSelectChecksEveryBackendAndLeavesCleanUnchanged) {
  const std::string sample = gpuclean::test::source_dir() + "/data/sample/";
  const std::string in = sample + "dirty.fits " + sample + "psf.fits";
  const Result plain = run(tmp_, gpuclean_cmd(in + " -o " + tmp_.file("a.fits") + " --model " + tmp_.file("am.fits") +
                                              " --json " + tmp_.file("a.json") + " -q"));
  ASSERT_EQ(plain.code, 0) << plain.err;
  const Result cmp = run(tmp_, gpuclean_cmd(in + " -o " + tmp_.file("b.fits") + " --model " + tmp_.file("bm.fits") +
                                            " --json " + tmp_.file("b.json") + " --compare-select --compare-select-cpu"));
  ASSERT_EQ(cmp.code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("speed-up over sort"), std::string::npos) << cmp.out;
  // CLEAN went on with its own backend: the same model, pixel for pixel.
  EXPECT_EQ(gpuclean::io::read_fits_image(tmp_.file("am.fits")).pixels,
            gpuclean::io::read_fits_image(tmp_.file("bm.fits")).pixels);
  const json a = json::parse(slurp(tmp_.file("a.json"))), b = json::parse(slurp(tmp_.file("b.json")));
  EXPECT_EQ(a["runs"][0]["iterations"], b["runs"][0]["iterations"]);
  const json c = json::parse(slurp(tmp_.file("b-select.json")));
  EXPECT_EQ(c["cycles"].size(), b["runs"][0]["major_cycles"].get<std::size_t>());
  for (const char* backend : {"sort", "randomized", "sample", "bucket", "cutting-plane", "cpu"}) {
    EXPECT_TRUE(c["total_seconds"].contains(backend)) << backend;
    for (const auto& cycle : c["cycles"]) EXPECT_GT(cycle["seconds"][backend].get<double>(), 0.0) << backend;
  }
  EXPECT_FALSE(c["total_seconds"].contains("sample-approx"));  // not exact: nothing to compare
  EXPECT_FALSE(c["total_seconds"].contains("auto"));  // a dispatcher: it would time another backend twice
  const auto png = gpuclean::io::decode_png_grey_alpha(tmp_.file("b-select.png"));
  EXPECT_EQ(png.width, 960u);
  EXPECT_NE(slurp(tmp_.file("b-select.csv")).find("cycle,n,k,count,backend,seconds,speedup_over_sort"), std::string::npos);
}

TEST_F(BatchGpu, BatchOnTheGpuWithComparisonAndQuicklook) {
  const fs::path d = make_folder("in");
  const Result r = run(tmp_, gpuclean_cmd("batch " + d.string() + " --compare-select --quicklook --device gpu"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json rep = report(d / "gpuclean-batch.json");
  for (const auto& o : rep["observations"]) {
    EXPECT_EQ(o["status"], "done");
    EXPECT_EQ(o["device"].get<std::string>().rfind("gpu", 0), 0u);
  }
  for (int i = 0; i < 3; ++i) {
    const std::string n = "obs" + std::to_string(i);
    EXPECT_TRUE(fs::exists(d / (n + "-image.png")));
    EXPECT_TRUE(fs::exists(d / (n + "-image-select.png")));
    EXPECT_TRUE(fs::exists(d / (n + "-image-select.csv")));
  }
}

// Several observations at once on one GPU give exactly what one at a time gives.
TEST_F(BatchGpu, StreamsPerGpuDoNotChangeAnyResult) {
  const fs::path one = make_folder("one", 6), three = make_folder("three", 6), automatic = make_folder("auto", 6);
  const Result r1 = run(tmp_, gpuclean_cmd("batch " + one.string() + " -q --device gpu --max-gpus 1 --streams-per-gpu 1"));
  ASSERT_EQ(r1.code, 0) << r1.err;
  const Result r3 = run(tmp_, gpuclean_cmd("batch " + three.string() + " -q --device gpu --max-gpus 1 --streams-per-gpu 3"));
  ASSERT_EQ(r3.code, 0) << r3.err;
  const Result ra = run(tmp_, gpuclean_cmd("batch " + automatic.string() + " -v --device gpu --max-gpus 1"));
  ASSERT_EQ(ra.code, 0) << ra.err;
  EXPECT_NE(ra.out.find("streams per GPU"), std::string::npos) << ra.out;

  const json rep1 = report(one / "gpuclean-batch.json"), rep3 = report(three / "gpuclean-batch.json"),
             repa = report(automatic / "gpuclean-batch.json");
  EXPECT_EQ(rep1["totals"]["streams_per_gpu"], 1);
  EXPECT_EQ(rep3["totals"]["streams_per_gpu"], 3);
  EXPECT_EQ(rep3["totals"]["workers"].size(), 3u);
  EXPECT_EQ(rep3["totals"]["done"], 6);
  const int automatic_streams = repa["totals"]["streams_per_gpu"].get<int>();
  EXPECT_GE(automatic_streams, 1);
  EXPECT_LE(automatic_streams, 8);
  EXPECT_EQ(repa["totals"]["workers"].size(), static_cast<std::size_t>(automatic_streams));

  const auto bytes_of = [](const fs::path& p) {
    const auto img = gpuclean::io::read_fits_image(p.string());
    std::string b(img.pixels.size() * sizeof(float), '\0');
    if (!img.pixels.empty()) std::memcpy(b.data(), img.pixels.data(), b.size());
    return b;
  };
  for (int i = 0; i < 6; ++i) {
    for (const char* kind : {"image", "model", "residual"}) {
      const std::string f = "obs" + std::to_string(i) + "-" + kind + ".fits";
      const std::string want = bytes_of(one / f);
      EXPECT_GT(want.size(), 0u) << f;
      EXPECT_TRUE(bytes_of(three / f) == want) << f << " differs with --streams-per-gpu 3";
      EXPECT_TRUE(bytes_of(automatic / f) == want) << f << " differs with the automatic number";
    }
  }
}

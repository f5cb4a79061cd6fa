#include "app/bench/bench_batch.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/pipeline.hpp"
#include "data/simulate.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Observations per second at which `threads` threads write `count` observations' outputs (three
// images the size of `like`, with its header) into `dir` with the batch's FITS writer.
double disk_write_rate(const fs::path& dir, const io::FitsImage& like, std::size_t count, std::size_t threads) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  io::WriteOptions w;
  w.overwrite = true;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t j; (j = next.fetch_add(1)) < count;) {
        try {
          for (const char* kind : {"residual", "model", "image"}) {
            const fs::path p = dir / ("obs" + std::to_string(j) + "-" + kind + ".fits");
            io::write_fits_image(p.string(), like.pixels.data(), like.width, like.height, like.header, like.axes, w);
          }
        } catch (const std::exception& e) {
          if (!failed.exchange(true)) std::fprintf(stderr, "disk write check: %s\n", e.what());
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  const double seconds = since(t0);
  fs::remove_all(dir, ec);
  return failed || seconds <= 0 ? 0.0 : static_cast<double>(count) / seconds;
}

// Where the clean stage's time goes, summed over its observations: the stages CLEAN times itself
// (each ends with the host waiting for its work), the major cycles and the longest chain.
struct StageTally {
  clean::StageSeconds s;
  double wall = 0;
  std::size_t cycles = 0, chain = 0;

  void add(const clean::CleanResult& r, double seconds) {
    s += r.diagnostics.seconds;
    wall += seconds;
    cycles += r.stop.major_cycles;
    chain = std::max(chain, r.diagnostics.minor_stats.longest_chain);
  }

  void print(std::size_t runs) const {
    if (runs == 0) return;
    const double n = static_cast<double>(runs), ms = 1e3 / n;
    const double staged = s.setup + s.select + s.minor + s.convolve + s.download + s.restore + s.noise_map + s.scales;
    std::printf("clean stage per observation (ms): setup %.2f, select %.2f, minor %.2f, convolve %.2f, download %.2f, "
                "restore %.2f, other %.2f (thresholds, peaks, flux, report: the stages CLEAN does not time); "
                "%.1f major cycles, so %.3f ms a cycle outside the minor cycles; longest chain of any observation %zu\n",
                s.setup * ms, s.select * ms, s.minor * ms, s.convolve * ms, s.download * ms, s.restore * ms,
                (wall - staged) * ms, static_cast<double>(cycles) / n,
                cycles ? 1e3 * (wall - s.minor - s.setup - s.download - s.restore) / static_cast<double>(cycles) : 0.0,
                chain);
  }
};

struct ConcurrentStage {
  double rate = 0;  // observations/s; 0 when a worker failed
  StageTally tally;
  std::string error;  // the first worker's failure
};

// `runs` observations (round-robin over `loaded`) cleaned by `workers` threads, each with its own
// deconvolver (a stream, plans and staging of its own) and its own copy of the observations.
ConcurrentStage concurrent_stage(const std::vector<LoadedObservation>& loaded, clean::Algorithm algorithm,
                                 std::size_t workers, std::size_t runs, const Log& quiet) {
  ConcurrentStage out;
  std::mutex m;
  std::atomic<std::size_t> next{0}, ready{0};
  std::atomic<bool> go{false};
  Clock::time_point t0;
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      bool counted = false;  // in `ready`: a worker that fails before the start must not hold the others
      try {
        std::vector<LoadedObservation> mine = loaded;
        clean::DeconvolverPool deconvolver;  // this worker's, kept warm from run to run
        clean::RunPlan plan;
        plan.device = clean::Device::kGpu;
        clean_observation(mine[0], plan, deconvolver, quiet);  // warm-up
        counted = true;
        if (++ready == workers) {
          t0 = Clock::now();
          go = true;
        }
        while (!go) std::this_thread::yield();
        for (std::size_t j; (j = next.fetch_add(1)) < runs;) {
          const auto t_run = Clock::now();
          const clean::CleanResult r =
              clean_observation(mine[j % mine.size()], plan, deconvolver, quiet);
          const double seconds = since(t_run);
          const std::lock_guard<std::mutex> lock(m);
          out.tally.add(r, seconds);
        }
      } catch (const std::exception& e) {
        {
          const std::lock_guard<std::mutex> lock(m);
          if (out.error.empty()) out.error = e.what();
        }
        next = runs;  // the others stop after their current observation
        if (!counted && ++ready == workers) {
          t0 = Clock::now();
          go = true;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (out.error.empty()) out.rate = static_cast<double>(runs) / since(t0);
  return out;
}

}  // namespace

int run_bench_batch(const BenchBatchOptions& o) {
  const bool gpu = cuda::built_with_cuda() && cuda::has_usable_device();
  const fs::path dir = o.dir.empty() ? fs::temp_directory_path() / ("gpuclean-bench-batch-" + std::to_string(::getpid()))
                                     : fs::path(o.dir);
  fs::create_directories(dir);
  std::printf("bench batch on %s, %zux%zu observations (%zu simulated fields, %zu sources each, reused round-robin)\n",
              cuda::describe_device().c_str(), o.size, o.size, o.distinct, o.sources);
  {
    const data::SimulationSettings sim;
    std::printf("fields: %s weighting, %zu point sources and %zu Gaussians of %g to %g beams (extended sources) each\n",
                data::to_string(sim.weighting).c_str(), o.sources, o.sources / 50,
                sim.gaussian_min_beams, sim.gaussian_max_beams);
  }

  // The fields, on disk for the batch and in memory for the stage-alone run.
  std::vector<std::pair<std::string, std::string>> fields;
  const auto t_sim = Clock::now();
  for (std::size_t i = 0; i < o.distinct; ++i) {
    data::SimulationSettings sim;
    sim.size = o.size;
    sim.sources = o.sources;
    sim.gaussians = o.sources / 50;
    sim.seed = 4000 + i;
    const fs::path f = dir / ("field-" + std::to_string(i));
    if (!fs::exists(f / "psf.fits"))
      data::write_simulation(data::simulate(sim), sim, f.string(), true, "gpuclean bench batch");
    fields.push_back({(f / "dirty.fits").string(), (f / "psf.fits").string()});
  }
  std::fprintf(stderr, "fields ready in %.1f s\n", since(t_sim));

  // (a) The clean stage alone: what a worker does per observation, without any file.
  RunOptions base;
  base.verbosity = Verbosity::kQuiet;
  const Log quiet(Verbosity::kQuiet, false);
  std::vector<LoadedObservation> loaded;
  for (const auto& [dirty, psf] : fields) {
    RunOptions r = base;
    r.dirty = dirty;
    r.psf = psf;
    loaded.push_back(load_observation(r, quiet));
  }
  const clean::Device device = gpu ? clean::Device::kGpu : clean::Device::kCpu;
  const std::size_t stage_runs = o.counts.empty() ? 64 : o.counts.front();
  std::size_t components = 0;
  double stage_seconds = 0;
  StageTally tally;
  {
    // Gone before the batches run, so that their automatic choice sees the GPU's memory.
    clean::DeconvolverPool deconvolver;
    clean::RunPlan plan;
    plan.device = device;
    clean_observation(loaded[0], plan, deconvolver, quiet);  // warm-up: context, plans, pool
    const auto t_stage = Clock::now();
    for (std::size_t j = 0; j < stage_runs; ++j) {
      const auto t_run = Clock::now();
      const clean::CleanResult r = clean_observation(loaded[j % loaded.size()], plan, deconvolver, quiet);
      tally.add(r, since(t_run));
      components += r.stop.iterations;
    }
    stage_seconds = since(t_stage);
  }
  const double stage_rate = static_cast<double>(stage_runs) / stage_seconds;
  std::printf("clean stage alone (%s, images in memory, upload/download/restore included): %zu observations in "
              "%.2f s = %.2f observations/s, %.0f components each\n",
              gpu ? "GPU" : "CPU", stage_runs, stage_seconds, stage_rate,
              static_cast<double>(components) / static_cast<double>(stage_runs));
  tally.print(stage_runs);
  // The same observations on several workers at once, still without files: what concurrent
  // streams gain on the GPU alone, apart from the batch's reading and writing.
  if (gpu) {
    for (const std::size_t workers : o.sweep_streams) {
      if (workers < 2) continue;
      const ConcurrentStage c = concurrent_stage(loaded, base.settings.algorithm, workers, stage_runs, quiet);
      if (!c.error.empty()) {
        std::fprintf(stderr, "clean stage on %zu workers failed: %s\n", workers, c.error.c_str());
        continue;
      }
      std::printf("clean stage on %zu workers (a stream and deconvolver each, images in memory): %.2f observations/s, "
                  "%.2fx one worker\n", workers, c.rate, c.rate / stage_rate);
      c.tally.print(stage_runs);
    }
  }
  loaded.clear();

  // (b) Whole batches as child processes; (c) the disk's rate for their outputs.
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  const io::FitsImage sample = io::read_fits_image(fields.front().first);
  std::printf("\n%8s %5s %8s %4s %10s %10s %10s %8s %11s %10s %6s %8s %8s %8s %8s\n", "batch", "gpus", "streams", "io",
              "wall [s]", "obs/s", "vs stage", "busy", "peak host", "disk obs/s", "exit", "read ms", "clean ms",
              "minor ms", "write ms");
  int status = 0;
  double first_rate = 0, first_disk = 0;  // the first length's automatic batch and disk rate
  for (std::size_t ci = 0; ci < o.counts.size(); ++ci) {
    const std::size_t count = o.counts[ci];
    const fs::path out = dir / ("out-" + std::to_string(count));
    const fs::path manifest = dir / ("manifest-" + std::to_string(count) + ".csv");
    {
      std::ofstream m(manifest);
      m << "name,dirty,psf,out\n";
      for (std::size_t j = 0; j < count; ++j) {
        const auto& [dirty, psf] = fields[j % fields.size()];
        m << "obs" << j << "," << dirty << "," << psf << "," << (out / ("obs" + std::to_string(j) + "-image.fits")).string()
          << "\n";
      }
    }
    // One stream per GPU first (the first length only), then the automatic number.
    std::vector<std::string> variants = {""};
    if (ci == 0 && gpu) variants.insert(variants.begin(), "--streams-per-gpu=1");
    // The first length only: each asked-for streams x I/O threads pair (a missing list: the automatic choice).
    if (ci == 0 && gpu && (!o.sweep_streams.empty() || !o.sweep_io.empty())) {
      const std::vector<std::size_t> ss = o.sweep_streams.empty() ? std::vector<std::size_t>{0} : o.sweep_streams;
      const std::vector<std::size_t> ios = o.sweep_io.empty() ? std::vector<std::size_t>{0} : o.sweep_io;
      for (const std::size_t st : ss)
        for (const std::size_t io : ios)
          variants.push_back((st ? "--streams-per-gpu=" + std::to_string(st) : std::string()) +
                             (io ? " --io-threads=" + std::to_string(io) : std::string()));
    }
    // Every length on each asked-for number of GPUs that the host has.
    for (const std::size_t g : o.sweep_gpus)
      if (gpu && g <= static_cast<std::size_t>(cuda::device_count())) variants.push_back("--max-gpus=" + std::to_string(g));
    for (const std::string& variant : variants) {
      fs::remove_all(out, ec);
      fs::create_directories(out);
      const fs::path report = dir / ("report-" + std::to_string(count) + ".json");
      std::string cmd = quoted(self) + " batch " + quoted(manifest.string()) + " --quiet --report " + quoted(report.string());
      if (!variant.empty()) cmd += " " + variant;
      for (const auto& a : o.batch_args) cmd += " " + quoted(a);
      const int rc = std::system(cmd.c_str());
      double wall = 0, rate = 0, busy = 0;
      struct {
        double read = 0, clean = 0, write = 0, minor = 0;
        std::size_t count = 0;
      } stages;  // summed over the observations
      long peak_kib = 0;
      std::size_t streams = 0, io_threads = 1, gpus_used = 0;
      try {
        std::ifstream in(report);
        const auto j = nlohmann::json::parse(in);
        const auto& t = j["totals"];
        wall = t["wall_seconds"].get<double>();
        rate = t["observations_per_second"].get<double>();
        busy = t["clean_stage_busy_fraction"].get<double>();
        peak_kib = t["peak_host_memory_kib"].get<long>();
        streams = t["streams_per_gpu"].get<std::size_t>();
        io_threads = std::max<std::size_t>(1, t["io_threads"].get<std::size_t>());
        std::set<std::string> distinct;
        for (const auto& w : t["workers"]) distinct.insert(w.get<std::string>());
        gpus_used = streams ? distinct.size() : 0;
        for (const auto& e : j["observations"]) {
          const auto& sec = e["seconds"];
          stages.read += sec.value("read", 0.0);
          stages.clean += sec.value("clean", 0.0) + sec.value("restore", 0.0);
          stages.write += sec.value("write", 0.0);
          for (const auto& run : e.value("runs", nlohmann::json::array())) stages.minor += run["stage_seconds"].value("minor", 0.0);
          ++stages.count;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "no report from the %zu-observation batch: %s\n", count, e.what());
        status = 4;
      }
      if (rc != 0) status = 4;
      fs::remove_all(out, ec);
      // (c) The same outputs with the batch's writer threads and no CLEAN, after each automatic run.
      double disk_rate = 0;
      if (variant.empty()) {
        disk_rate = disk_write_rate(dir / ("disk-" + std::to_string(count)), sample, count, io_threads);
        if (ci == 0) first_rate = rate, first_disk = disk_rate;
      }
      const double per = stages.count ? 1e3 / static_cast<double>(stages.count) : 0.0;
      std::printf("%8zu %5zu %8s %4zu %10.2f %10.2f %9.0f%% %7.0f%% %7.0f MiB %10s %6d %8.0f %8.0f %8.0f %8.0f\n",
                  count, gpus_used, streams ? std::to_string(streams).c_str() : "cpu", io_threads, wall, rate,
                  stage_rate > 0 ? 100.0 * rate / stage_rate : 0.0, 100.0 * busy, peak_kib / 1024.0,
                  disk_rate > 0 ? fixed2(disk_rate).c_str() : "-", rc, stages.read * per, stages.clean * per,
                  stages.minor * per, stages.write * per);
      std::fflush(stdout);
    }
  }
  std::printf("gpus: GPUs that cleaned (0: the CPU); streams: clean workers per GPU (the first run sets 1, the "
              "second leaves it automatic, any further rows are --streams/--io's sweep, then --gpus'); io: reader and "
              "writer threads each; vs stage: batch observations/s over the clean stage alone on one stream; busy: "
              "share of the wall time the workers spent in the clean stage; disk obs/s: the same number of "
              "observations' outputs (restored, model, residual) written by the same writer with as many threads, "
              "no CLEAN; read, clean, minor, write ms: each stage's time per observation in the batch's report "
              "(read: FITS in, checks, PSF and beam; clean: the worker's CLEAN and restoration; minor: the minor "
              "cycles inside it)\n");
  if (first_disk > 0) {
    const double bound = std::min(o.target, first_disk);
    std::printf("bound for %zu observations: %s %.2f observations/s (target %.1f, disk %.2f); the automatic batch "
                "reached %.2f: %s\n",
                o.counts.front(), first_disk < o.target ? "the disk's rate," : "the target,", bound, o.target,
                first_disk, first_rate, first_rate >= bound ? "met" : "missed");
  }
  if (o.dir.empty()) fs::remove_all(dir, ec);
  return status;
}

}  // namespace gpuclean::app

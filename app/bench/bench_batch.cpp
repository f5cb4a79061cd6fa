#include "app/bench/bench_batch.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "app/pipeline.hpp"
#include "data/simulate.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

int run_bench_batch(const BenchBatchOptions& o) {
  const bool gpu = cuda::built_with_cuda() && cuda::has_usable_device();
  const fs::path dir = o.dir.empty() ? fs::temp_directory_path() / ("gpuclean-bench-batch-" + std::to_string(::getpid()))
                                     : fs::path(o.dir);
  fs::create_directories(dir);
  std::printf("bench batch on %s, %zux%zu observations (%zu simulated fields, %zu sources each, reused round-robin)\n",
              cuda::describe_device().c_str(), o.size, o.size, o.distinct, o.sources);

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
  const auto deconvolver = clean::make_deconvolver(base.settings.algorithm, device);
  clean_observation(loaded[0], device, *deconvolver, quiet);  // warm-up: context, plans, pool
  const std::size_t stage_runs = o.counts.empty() ? 64 : o.counts.front();
  std::size_t components = 0;
  const auto t_stage = Clock::now();
  for (std::size_t j = 0; j < stage_runs; ++j)
    components += clean_observation(loaded[j % loaded.size()], device, *deconvolver, quiet).iterations;
  const double stage_seconds = since(t_stage);
  const double stage_rate = static_cast<double>(stage_runs) / stage_seconds;
  loaded.clear();
  std::printf("clean stage alone (%s, images in memory, upload/download/restore included): %zu observations in "
              "%.2f s = %.2f observations/s, %.0f components each\n",
              gpu ? "GPU" : "CPU", stage_runs, stage_seconds, stage_rate,
              static_cast<double>(components) / static_cast<double>(stage_runs));

  // (b) Whole batches as child processes.
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  std::printf("\n%8s %10s %10s %12s %10s %12s %14s\n", "batch", "wall [s]", "obs/s", "vs stage", "busy", "peak host",
              "exit");
  int status = 0;
  for (std::size_t count : o.counts) {
    const fs::path out = dir / ("out-" + std::to_string(count));
    fs::remove_all(out, ec);
    fs::create_directories(out);
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
    const fs::path report = dir / ("report-" + std::to_string(count) + ".json");
    std::string cmd = quoted(self) + " batch " + quoted(manifest.string()) + " --quiet --report " + quoted(report.string());
    for (const auto& a : o.batch_args) cmd += " " + quoted(a);
    const int rc = std::system(cmd.c_str());
    double wall = 0, rate = 0, busy = 0;
    long peak_kib = 0;
    try {
      std::ifstream in(report);
      const auto j = nlohmann::json::parse(in);
      wall = j["totals"]["wall_seconds"].get<double>();
      rate = j["totals"]["observations_per_second"].get<double>();
      busy = j["totals"]["clean_stage_busy_fraction"].get<double>();
      peak_kib = j["totals"]["peak_host_memory_kib"].get<long>();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "no report from the %zu-observation batch: %s\n", count, e.what());
      status = 4;
    }
    if (rc != 0) status = 4;
    std::printf("%8zu %10.2f %10.2f %11.0f%% %9.0f%% %9.0f MiB %14d\n", count, wall, rate,
                stage_rate > 0 ? 100.0 * rate / stage_rate : 0.0, 100.0 * busy, peak_kib / 1024.0, rc);
    std::fflush(stdout);
    fs::remove_all(out, ec);
  }
  std::printf("vs stage: batch observations/s over the clean stage alone (target >= 80%%); busy: share of the "
              "batch's wall time its worker spent in the clean stage\n");
  if (o.dir.empty()) fs::remove_all(dir, ec);
  return status;
}

}  // namespace gpuclean::app

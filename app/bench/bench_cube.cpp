#include "app/bench/bench_cube.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <mutex>
#include <thread>

#include "app/cube/cube_run.hpp"
#include "clean/beam.hpp"
#include "clean/clean_mask.hpp"
#include "clean/deconvolution.hpp"
#include "clean/deconvolver.hpp"
#include "clean/image_stats.hpp"
#include "data/simulate_channels.hpp"
#include "select/cuda/device_info.hpp"
#include "clean/gpu_memory.hpp"

namespace gpuclean::app {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Cube {
  data::ChannelSimulation sim;
  std::vector<clean::HostImage> dirty;
  std::vector<clean::PreparedPsf> psf;
  std::vector<clean::PixelGaussian> beams;
};

Cube simulate_cube(std::size_t size, std::size_t channels, const BenchCleanOptions& o) {
  data::SimulationSettings s;
  s.size = size;
  s.sources = o.sources;
  s.gaussians = o.gaussians ? o.gaussians : o.sources / 100;
  s.seed = 2028;
  data::ChannelSettings c;
  c.channels = channels;
  c.bandwidth_hz = 0.4 * s.freq_hz;  // MeerKAT L band's 856 MHz around 1.28 GHz, roughly
  c.spectral_index_min = -1.2;
  c.spectral_index_max = 0.4;
  Cube cube;
  const auto t = Clock::now();
  cube.sim = data::simulate_channels(s, c);
  std::fprintf(stderr, "simulated %zu channels of %zux%zu in %.1f s\n", channels, size, size, since(t));
  for (const data::Simulation& ch : cube.sim.channels) {
    clean::HostImage d(size, size), p(size, size);
    d.pixels = ch.dirty;
    p.pixels = ch.psf;
    cube.dirty.push_back(std::move(d));
    cube.psf.push_back(clean::prepare_psf(p, size, size, nullptr));
    cube.beams.push_back(clean::fit_psf_beam(cube.psf.back()));
  }
  return cube;
}

// The cube's first `planes` channels as the run facade's work table.
clean::WorkTable cube_table(const Cube& cube, std::size_t planes) {
  clean::WorkTable t;
  t.width = cube.dirty.front().width;
  t.height = cube.dirty.front().height;
  t.channels = planes;
  for (std::size_t c = 0; c < planes; ++c)
    t.planes.push_back({&cube.dirty[c], &cube.psf[c], c, 0, "", cube.sim.frequencies_hz[c], cube.sim.image_weights[c],
                        &cube.beams[c]});
  return t;
}

clean::CleanSettings settings_for(std::size_t niter, double threshold, clean::Device device) {
  clean::CleanSettings s;
  s.niter = niter;
  s.threshold = threshold;
  s.auto_threshold = 0.0;
  s.device = device;
  return s;
}

struct JoinedRow {
  std::size_t size = 0, channels = 0, niter = 0;
  std::string path;
  clean::CleanResult result;
  double seconds = 0;
};

JoinedRow run_joined(const Cube& cube, std::size_t niter, clean::Device device, const BenchCleanOptions& o) {
  clean::WorkTable table = cube_table(cube, cube.dirty.size());
  clean::CleanSettings warm = settings_for(100, o.threshold, device), timed = settings_for(niter, o.threshold, device);
  warm.join_channels = timed.join_channels = true;
  clean::group_planes(table, timed);
  clean::RunPlan plan;
  plan.device = device;
  clean::DeconvolverPool d;
  if (device == clean::Device::kGpu) clean::Deconvolution(warm, table, plan).run({}, {}, &d);
  const auto t = Clock::now();
  JoinedRow row;
  row.size = cube.dirty.front().width;
  row.channels = cube.dirty.size();
  row.niter = niter;
  row.path = device == clean::Device::kGpu ? "gpu" : "cpu";
  row.result = std::move(clean::Deconvolution(timed, table, plan).run({}, {}, &d).front());
  row.seconds = since(t) - row.result.diagnostics.seconds.restore;
  const clean::StageSeconds& st = row.result.diagnostics.seconds;
  std::fprintf(stderr, "joined %s: set-up %.3f, select %.3f, minor %.3f, convolve %.3f, download %.3f, restore %.3f s; "
               "widest cluster %zu members\n",
               row.path.c_str(), st.setup, st.select, st.minor, st.convolve, st.download, st.restore,
               row.result.diagnostics.minor_stats.widest_cluster);
  return row;
}

// Every plane on its own: `workers` deconvolvers at once; returns channels per second.
// `first` (if not null) gets plane 0's result, for its profile.
double run_independent(const Cube& cube, std::size_t planes, std::size_t niter, clean::Device device,
                       std::size_t workers, const BenchCleanOptions& o, std::size_t* components,
                       clean::CleanResult* first = nullptr) {
  clean::WorkTable table = cube_table(cube, planes);
  clean::group_planes(table, settings_for(niter, o.threshold, device));
  std::vector<std::size_t> made(planes, 0);
  clean::StageSeconds sum;
  double wall = 0.0;  // run() calls, summed
  std::mutex sum_mutex;
  auto one = [&](std::size_t c, clean::Deconvolver& d, std::size_t n) {
    const clean::CleanSettings s = settings_for(n, o.threshold, device);
    const clean::GroupProblem gp(table, c, s);
    const auto t_run = Clock::now();
    clean::CleanResult result = d.run(gp.problem(), s, {});
    const double run_seconds = since(t_run);
    made[c] = result.stop.iterations;
    if (first && c == 0 && n == niter) *first = result;
    if (n == niter) {
      std::lock_guard<std::mutex> lock(sum_mutex);
      sum += result.diagnostics.seconds;
      wall += run_seconds;
    }
  };
  // Warm: every worker's deconvolver (plans, pools, streams) before the timed run, as the other
  // GPU benchmarks time a warm process.
  clean::DeconvolverPool pool(workers);
  if (device == clean::Device::kGpu)
    for (std::size_t w = 0; w < workers; ++w) {
      pool[w] = clean::make_deconvolver(clean::Algorithm::kClark, device);
      one(w % planes, *pool[w], 100);
    }
  const auto t = Clock::now();
  clean::for_each_worker(planes, workers, clean::Algorithm::kClark, device,
                 [&](std::size_t c, clean::Deconvolver& d) { one(c, d, niter); }, &pool);
  const double seconds = since(t);
  const double k = 1.0 / static_cast<double>(planes);
  std::printf("    %zu at once, mean per plane: run() %.3f s: set-up %.3f, select %.3f, minor %.3f, convolve %.3f, "
              "restore %.3f, download %.3f s\n",
              workers, wall * k, sum.setup * k, sum.select * k, sum.minor * k, sum.convolve * k, sum.restore * k,
              sum.download * k);
  *components = 0;
  for (std::size_t m : made) *components += m;
  return static_cast<double>(planes) / seconds;
}

}  // namespace

int run_bench_cube(const BenchCleanOptions& o) {
  const bool gpu = cuda::built_with_cuda() && cuda::has_usable_device();
  std::printf("bench clean --channels %zu on %s; %d CPU threads; threshold %.3g Jy/beam, no auto-threshold; "
              "simulated MeerKAT cubes, band 40%% of 1.4 GHz, spectral indices -1.2..0.4, each channel its own PSF\n",
              o.channels, cuda::describe_device().c_str(), static_cast<int>(std::thread::hardware_concurrency()),
              o.threshold);
  std::printf("joined: --join-channels over all channels (GPU timed in a warm process after a 100-component run); "
              "clean s excludes restoration\n");
  int status = 0;
  std::printf("%-6s %-8s %-7s %-5s %8s %6s %-9s %9s %8s %8s %8s %8s %9s %8s %8s %8s\n", "size", "channels", "niter",
              "path", "comps", "cycles", "stop", "clean s", "select", "minor", "convolve", "comps/s", "GPU MiB",
              "clusters", "chain", "speed-up");
  for (std::size_t size : o.sizes) {
    const Cube cube = simulate_cube(size, std::max(o.channels, o.independent_channels), o);
    for (std::size_t niter : o.niters) {
      std::vector<JoinedRow> rows;
      for (clean::Device device : {clean::Device::kGpu, clean::Device::kCpu}) {
        if (device == clean::Device::kGpu && !gpu) continue;
        if (device == clean::Device::kCpu && size > o.cpu_max_size) continue;
        try {
          Cube sub;
          sub.sim.frequencies_hz.assign(cube.sim.frequencies_hz.begin(), cube.sim.frequencies_hz.begin() + o.channels);
          sub.sim.image_weights.assign(cube.sim.image_weights.begin(), cube.sim.image_weights.begin() + o.channels);
          sub.dirty.assign(cube.dirty.begin(), cube.dirty.begin() + o.channels);
          sub.psf.assign(cube.psf.begin(), cube.psf.begin() + o.channels);
          sub.beams.assign(cube.beams.begin(), cube.beams.begin() + o.channels);
          rows.push_back(run_joined(sub, niter, device, o));
          std::fprintf(stderr, "joined %zu %zu %s: %.3f s\n", size, niter, rows.back().path.c_str(), rows.back().seconds);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "joined %zu %zu failed: %s\n", size, niter, e.what());
          status = 4;
        }
      }
      const double cpu = rows.size() == 2 ? rows[1].seconds : 0.0;
      for (const JoinedRow& r : rows) {
        const clean::CleanResult& x = r.result;
        const std::string speedup = r.path == "gpu" && cpu > 0 ? std::to_string(static_cast<int>(cpu / r.seconds + 0.5)) + "x" : "-";
        std::printf("%-6zu %-8zu %-7zu %-5s %8zu %6zu %-9s %9.3f %8.3f %8.3f %8.3f %8.0f %9zu %8zu %8zu %8s\n",
                    r.size, r.channels, r.niter, r.path.c_str(), x.stop.iterations, x.stop.major_cycles,
                    std::string(clean::to_string(x.stop.reason)).c_str(), r.seconds, x.diagnostics.seconds.select, x.diagnostics.seconds.minor,
                    x.diagnostics.seconds.convolve, static_cast<double>(x.stop.iterations) / std::max(r.seconds, 1e-9),
                    x.diagnostics.peak_gpu_bytes >> 20, x.diagnostics.minor_stats.clusters, x.diagnostics.minor_stats.longest_chain, speedup.c_str());
      }
    }
    if (o.independent_channels == 0) continue;
    const std::size_t niter = o.niters.front();
    std::printf("\nindependent planes, %zux%zu, niter %zu each:\n", size, size, niter);
    if (gpu) {
      // --parallel-planes N: 1 and N at once; else 1, 4, 8 and 16 as far as the free memory holds them.
      std::size_t fit = 16;
#ifdef GPUCLEAN_HAVE_CUDA
      const clean::CleanSettings s = settings_for(niter, o.threshold, clean::Device::kGpu);
      const std::size_t per = clean::gpu_bytes_needed(
          {.width = size, .height = size, .psf_width = size, .psf_height = size, .beam = cube.beams[0]}, s);
      fit = cuda::device_memory().free_bytes * 9 / 10 / std::max<std::size_t>(per, 1);
#endif
      const std::vector<std::size_t> counts =
          o.parallel_planes ? std::vector<std::size_t>{1, o.parallel_planes} : std::vector<std::size_t>{1, 4, 8, 16};
      for (std::size_t w : counts) {
        if (w > 1 && w > fit) break;
        std::size_t comps = 0;
        clean::CleanResult first;
        const double rate =
            run_independent(cube, o.independent_channels, niter, clean::Device::kGpu, w, o, &comps, &first);
        std::printf("  gpu, %zu planes, %zu at once: %.1f channels/s (%zu components)\n", o.independent_channels, w,
                    rate, comps);
        if (w == 1)
          std::printf("    plane 0 alone: %.3f s (set-up %.3f, select %.3f, minor %.3f, convolve %.3f, download %.3f), "
                      "%zu cycles, %zu clusters, longest chain %zu\n",
                      first.diagnostics.seconds.setup + first.diagnostics.seconds.select + first.diagnostics.seconds.minor + first.diagnostics.seconds.convolve + first.diagnostics.seconds.download, first.diagnostics.seconds.setup, first.diagnostics.seconds.select, first.diagnostics.seconds.minor,
                      first.diagnostics.seconds.convolve, first.diagnostics.seconds.download, first.stop.major_cycles, first.diagnostics.minor_stats.clusters,
                      first.diagnostics.minor_stats.longest_chain);
      }
    }
    if (size <= o.cpu_max_size && o.cpu_planes > 0) {
      std::size_t comps = 0;
      const std::size_t planes = std::min(o.cpu_planes, o.independent_channels);
      const double rate = run_independent(cube, planes, niter, clean::Device::kCpu, 1, o, &comps);
      std::printf("  cpu, %zu planes, one at a time on every core: %.2f channels/s (%zu components)\n", planes, rate,
                  comps);
    }
  }
  return status;
}

}  // namespace gpuclean::app

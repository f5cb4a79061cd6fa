#include "app/bench/bench_clean.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "clean/beam.hpp"
#include "clean/clean_mask.hpp"
#include "clean/deconvolution.hpp"
#include "clean/deconvolver.hpp"
#include "clean/fft_convolver_cpu.hpp"
#include "clean/image_stats.hpp"
#include "data/simulate.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Row {
  std::size_t size = 0, niter = 0;
  std::string path;
  std::size_t components = 0, cycles = 0;
  std::string stop;
  double clean = 0, setup = 0, download = 0, select = 0, minor = 0, convolve = 0, restore = 0;
  double scales = 0;         // multiscale: the scale images and the choice among them
  double noise_map = 0;      // --local-rms: the noise map and its weights
  std::size_t n_scales = 1;
  double gbps = 0;  // traffic of the dominant passes (see header of the table)
  // GPU Clark: the minor-cycle engine's figures (SMs given work, clusters, the longest chain, ...)
  clean::MinorCycleStats minor_stats;
  std::size_t peak_gpu_mib = 0;
  double speedup = 0;  // over cpu-clark on the same case
};

// Bytes the dominant passes move at least, per run: Högbom reads residual, PSF and mask and
// writes residual and masked per component; Clark's FFT stage pads, transforms forth and back
// (a read and a write each), multiplies and subtracts, per major cycle.
double dominant_bytes(const Row& r) {
  const double n = static_cast<double>(r.size) * static_cast<double>(r.size);
  if (r.path == "gpu-hogbom") return static_cast<double>(r.components) * n * 17.0;
  const double pw = static_cast<double>(clean::fft_friendly_size(r.size + r.size / 2));
  const double spectrum = pw * (pw / 2 + 1) * 8.0;
  return static_cast<double>(r.cycles) * (2 * spectrum + 4 * spectrum + 3 * spectrum + n * 17.0);
}

bool is_cpu(const std::string& path) { return path.rfind("cpu-", 0) == 0; }
bool is_multiscale(const std::string& path) { return path.find("multiscale") != std::string::npos; }

Row run_case(const clean::WorkTable& table, std::size_t size, std::size_t niter, const std::string& path,
             const BenchCleanOptions& o) {
  clean::CleanSettings s;
  s.niter = niter;
  s.threshold = o.threshold;
  s.auto_threshold = 0.0;
  // A path is DEVICE-ALGORITHM, or DEVICE-multiscale (Clark over scales).
  s.algorithm = clean::parse_name(clean::kAlgorithmNames, path.substr(4)).value_or(clean::Algorithm::kClark);
  s.device = is_cpu(path) ? clean::Device::kCpu : clean::Device::kGpu;
  s.multiscale.enabled = is_multiscale(path);
  s.multiscale.max_scales = o.max_scales;
  s.local_rms.enabled = o.local_rms && s.algorithm == clean::Algorithm::kClark;
  s.local_rms.window = o.local_rms_window;
  s.local_rms.method = o.local_rms_method;
  // A warm process, as in batch mode: CUDA, the cuFFT plans, the pooled memory and the cached
  // transforms of this size exist before the timed run (a short run of the same path makes them).
  clean::DeconvolverPool deconvolver;
  clean::RunPlan plan;
  plan.device = s.device;
  if (s.device == clean::Device::kGpu) {
    clean::CleanSettings warm = s;
    warm.niter = 100;
    clean::Deconvolution(warm, table, plan).run({}, {}, &deconvolver);
  }
  const auto t0 = Clock::now();
  const clean::CleanResult r = std::move(clean::Deconvolution(s, table, plan).run({}, {}, &deconvolver).front());
  Row row;
  row.size = size;
  row.niter = niter;
  row.path = path;
  row.clean = std::chrono::duration<double>(Clock::now() - t0).count() - r.diagnostics.seconds.restore;
  row.components = r.stop.iterations;
  row.cycles = r.stop.major_cycles;
  row.stop = std::string(clean::to_string(r.stop.reason));
  row.setup = r.diagnostics.seconds.setup;
  row.download = r.diagnostics.seconds.download;
  row.select = r.diagnostics.seconds.select;
  row.minor = r.diagnostics.seconds.minor;
  row.convolve = r.diagnostics.seconds.convolve;
  row.restore = r.diagnostics.seconds.restore;
  row.scales = r.diagnostics.seconds.scales;
  row.noise_map = r.diagnostics.seconds.noise_map;
  row.n_scales = r.components.scales.size();
  row.peak_gpu_mib = r.diagnostics.peak_gpu_bytes >> 20;
  row.minor_stats = r.diagnostics.minor_stats;
  const double stage = path == "gpu-hogbom" ? row.minor : row.convolve;
  if (!is_cpu(path) && !is_multiscale(path) && stage > 0) row.gbps = dominant_bytes(row) / stage / 1e9;
  return row;
}

void print_table(const std::vector<Row>& rows) {
  std::printf("%-6s %-7s %-14s %6s %8s %6s %-9s %9s %8s %9s %8s %8s %8s %8s %8s %8s %11s %9s %8s %8s %8s %8s %8s %8s\n",
              "size", "niter", "path", "scales", "comps", "cycles", "stop", "clean s", "setup", "noise map", "download", "scale im",
              "select", "minor", "convolve", "restore", "comps/s", "us/comp", "SMs busy", "clusters", "chain", "GB/s",
              "GPU MiB", "speed-up");
  for (const Row& r : rows) {
    const bool clark_gpu = r.path == "gpu-clark" || r.path == "gpu-multiscale";
    std::printf("%-6zu %-7zu %-14s %6zu %8zu %6zu %-9s %9.3f %8.3f %9.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %11.0f %9.3f %8s %8s %8s %8.0f %8zu %8s\n",
                r.size, r.niter, r.path.c_str(), r.n_scales, r.components, r.cycles, r.stop.c_str(), r.clean, r.setup,
                r.noise_map, r.download, r.scales, r.select, r.minor, r.convolve, r.restore,
                r.clean > 0 ? static_cast<double>(r.components) / r.clean : 0.0,
                r.components ? 1e6 * r.minor / static_cast<double>(r.components) : 0.0,
                clark_gpu ? (std::to_string(static_cast<int>(100 * r.minor_stats.sm_busy_fraction + 0.5)) + "%").c_str() : "-",
                clark_gpu ? std::to_string(r.minor_stats.clusters).c_str() : "-",
                clark_gpu ? std::to_string(r.minor_stats.longest_chain).c_str() : "-",
                r.gbps, r.peak_gpu_mib,
                r.speedup > 0 ? (std::to_string(static_cast<int>(r.speedup + 0.5)) + "x").c_str() : "-");
  }
}

std::string self_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("gpuclean") : p.string();
}

}  // namespace

int run_bench_clean(const BenchCleanOptions& o) {
  std::printf("bench clean on %s; %d CPU threads; threshold %.3g Jy/beam, no auto-threshold\n",
              cuda::describe_device().c_str(), static_cast<int>(std::thread::hardware_concurrency()), o.threshold);
  std::printf("multiscale paths: up to %zu automatic scales (0 included); 'scale im': the scale images and the "
              "choice among them; speed-up against the CPU path of the same algorithm\n", o.max_scales);
  if (o.local_rms)
    std::printf("--local-rms %s on the Clark and multiscale paths, window %g beams; 'noise map': its maps and "
                "weights (remade each time the residual peak halved)\n", std::string(clean::to_string(o.local_rms_method)).c_str(), o.local_rms_window);
  std::printf("GB/s: least traffic of the dominant passes (Clark: the cuFFT major cycles; Hogbom: the "
              "subtract-and-find-peak pass) over their time; H100 peak 3080 GB/s\n");
  std::printf("GPU runs are timed in a warm process (a 100-component run of the same path and field first); "
              "us/comp: minor-cycle time per component; SMs busy: SMs the minor cycles' launch gave work to, "
              "weighted by time; clusters: independent clusters over all cycles; chain: most components one "
              "cluster made in one cycle\n");
  {
    data::SimulationSettings sim;
    std::printf("field: simulated, %s weighting, %zu point sources and %zu Gaussians of %g to %g beams (extended "
                "sources), seed 2026\n", data::to_string(sim.weighting).c_str(), o.sources,
                o.gaussians ? o.gaussians : o.sources / 100, sim.gaussian_min_beams, sim.gaussian_max_beams);
  }
  const bool gpu = cuda::built_with_cuda() && cuda::has_usable_device();
  std::vector<Row> rows;
  int status = 0;
  for (std::size_t size : o.sizes) {
    data::SimulationSettings sim;
    sim.size = size;
    sim.sources = o.sources;
    sim.gaussians = o.gaussians ? o.gaussians : o.sources / 100;
    sim.seed = 2026;
    const auto t_sim = Clock::now();
    const data::Simulation field = data::simulate(sim);
    std::fprintf(stderr, "simulated %zux%zu in %.1f s\n", size, size,
                 std::chrono::duration<double>(Clock::now() - t_sim).count());
    clean::HostImage dirty(size, size), psf_image(size, size);
    dirty.pixels = field.dirty;
    psf_image.pixels = field.psf;
    const clean::PreparedPsf psf = clean::prepare_psf(psf_image, size, size, nullptr);
    const auto mask = clean::make_clean_mask(dirty, nullptr, 0.0);
    const clean::PixelGaussian beam = clean::fit_psf_beam(psf, clean::BeamFit::kWsclean);
    const clean::WorkTable table = clean::one_plane_table(dirty, psf, &mask, &beam);
    for (std::size_t niter : o.niters) {
      double cpu_clark = 0, cpu_multiscale = 0;
      std::vector<Row> here;
      for (const std::string& path : o.paths) {
        if (!is_cpu(path) && !gpu) continue;
        if (is_cpu(path) && size > o.cpu_max_size) continue;
        if (path == "gpu-hogbom" && size > o.hogbom_max_size) continue;
        try {
          here.push_back(run_case(table, size, niter, path, o));
          if (path == "cpu-clark") cpu_clark = here.back().clean;
          if (path == "cpu-multiscale") cpu_multiscale = here.back().clean;
          const Row& r = here.back();
          std::fprintf(stderr, "%zu %zu %s: %.3f s\n", size, niter, path.c_str(), r.clean);
          // Where the minor cycle's time goes: its longest chain and its widest cluster.
          const std::size_t chain = r.minor_stats.longest_chain;
          if (chain > 0)
            std::fprintf(stderr,
                         "  minor %.3f s over a longest chain of %zu: %.3f us a step; widest cluster %zu members\n",
                         r.minor, chain, 1e6 * r.minor / static_cast<double>(chain), r.minor_stats.widest_cluster);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%zu %zu %s failed: %s\n", size, niter, path.c_str(), e.what());
          status = 4;
        }
      }
      for (Row& r : here) {
        // Against the CPU path of the same algorithm.
        const double cpu_seconds = is_multiscale(r.path) ? cpu_multiscale : cpu_clark;
        if (cpu_seconds > 0 && r.clean > 0) r.speedup = cpu_seconds / r.clean;
        rows.push_back(r);
      }
    }
  }
  print_table(rows);

  if (o.cli_size > 0) {
    data::SimulationSettings sim;
    sim.size = o.cli_size;
    sim.sources = o.sources;
    sim.seed = 2027;
    const fs::path dir = fs::temp_directory_path() / ("gpuclean-bench-" + std::to_string(::getpid()));
    data::write_simulation(data::simulate(sim), sim, dir.string(), true, "gpuclean bench clean");
    const std::string cmd = "'" + self_path() + "' '" + (dir / "dirty.fits").string() + "' '" +
                            (dir / "psf.fits").string() + "' -o '" + (dir / "restored.fits").string() +
                            "' --model '" + (dir / "model.fits").string() + "' --residual '" +
                            (dir / "residual.fits").string() + "' --niter 100000 --overwrite --quiet";
    const auto t0 = Clock::now();
    const int rc = std::system(cmd.c_str());
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("\nwhole command line, %zux%zu pair, niter 1e5 (read, clean, restore, write 3 images): %.2f s wall, "
                "exit %d\n", o.cli_size, o.cli_size, wall, rc);
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (rc != 0) status = 4;
  }

  if (!o.output.empty() && o.format != "table") {
    std::ofstream f(o.output);
    if (o.format == "json") {
      nlohmann::json j = nlohmann::json::array();
      for (const Row& r : rows)
        j.push_back({{"size", r.size}, {"niter", r.niter}, {"path", r.path}, {"components", r.components},
                     {"cycles", r.cycles}, {"stop", r.stop}, {"clean_s", r.clean}, {"setup_s", r.setup}, {"download_s", r.download}, {"select_s", r.select},
                     {"minor_s", r.minor}, {"convolve_s", r.convolve}, {"restore_s", r.restore}, {"scale_images_s", r.scales}, {"noise_map_s", r.noise_map}, {"scales", r.n_scales},
                     {"gbps", r.gbps}, {"peak_gpu_mib", r.peak_gpu_mib}, {"speedup_vs_cpu", r.speedup},
                     {"sm_busy_fraction", r.minor_stats.sm_busy_fraction}, {"clusters", r.minor_stats.clusters},
                     {"longest_chain", r.minor_stats.longest_chain},
                     {"minor_us_per_component", r.components ? 1e6 * r.minor / static_cast<double>(r.components) : 0.0}});
      f << j.dump(2) << "\n";
    } else {
      f << "size,niter,path,components,cycles,stop,clean_s,setup_s,download_s,select_s,minor_s,convolve_s,restore_s,gbps,peak_gpu_mib,"
           "speedup_vs_cpu,sm_busy_fraction,clusters,longest_chain\n";
      for (const Row& r : rows)
        f << r.size << ',' << r.niter << ',' << r.path << ',' << r.components << ',' << r.cycles << ',' << r.stop
          << ',' << r.clean << ',' << r.setup << ',' << r.download << ',' << r.select << ',' << r.minor << ',' << r.convolve << ',' << r.restore << ','
          << r.gbps << ',' << r.peak_gpu_mib << ',' << r.speedup << ',' << r.minor_stats.sm_busy_fraction << ','
          << r.minor_stats.clusters << ',' << r.minor_stats.longest_chain << '\n';
    }
  }
  return status;
}

}  // namespace gpuclean::app

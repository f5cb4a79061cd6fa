#include "app/bench/bench_gridder.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <functional>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "app/bench/gridder_observation.hpp"
#include "app/errors.hpp"
#include "data/rng.hpp"
#include "imaging/grid_plan.hpp"
#include "imaging/gridder_cpu.hpp"
#include "imaging/gpu/gridder_gpu.hpp"  // host-only declarations; GridderTimings is used by the CPU rows too
#include "select/cuda/device_info.hpp"
#ifdef GPUCLEAN_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gpuclean::app {
namespace {

using Clock = std::chrono::steady_clock;
using imaging::GridPlan;

constexpr double kFlagged = 0.1;
// FFT traffic model: a batched 2-D C2C transform of a complex-float grid reads and writes it once
// per pass, one pass per axis; cuFFT's plans for these sizes take 2 or 3, so 32 B per cell is the
// least traffic and the bandwidth below a lower bound of what the FFT moves.
constexpr double kFftBytesPerCell = 2 * 2 * 8;

// The cases of docs/design/imaging-plan.md §7 as scripts/imaging_bench.py simulates them (bands,
// track lengths); rows = integrations × 2,016 baselines.
struct Case {
  std::string name;
  std::size_t size = 0;
  double scale_arcsec = 0;
  std::size_t channels = 0, rows = 0;
  double low_hz = 0, high_hz = 0, hours = 0;
};

Case preset(const std::string& name) {
  if (name == "A") return {"A", 2048, 1.6, 4, 241920, 1.36e9, 1.44e9, 4.0};
  if (name == "B") return {"B", 8192, 1.5, 8, 60480, 1.36e9, 1.52e9, 8.0};
  return {"C", 8192, 1.5, 8, 999936, 1.36e9, 1.52e9, 8.0};
}

Case with_overrides(Case c, const BenchGridderOptions& o) {
  if (o.size) c.size = o.size;
  if (o.scale_arcsec > 0) c.scale_arcsec = o.scale_arcsec;
  if (o.channels) c.channels = o.channels;
  if (o.rows) c.rows = o.rows;
  if (o.hours > 0) c.hours = o.hours;
  return c;
}

enum class Op { kDirtyPsf, kDirty, kPredict, kCpuDirtyPsf, kCpuPredict };

const char* op_name(Op op) {
  switch (op) {
    case Op::kDirtyPsf: return "GPU dirty+PSF";
    case Op::kDirty: return "GPU dirty";
    case Op::kPredict: return "GPU predict";
    case Op::kCpuDirtyPsf: return "CPU dirty+PSF";
    case Op::kCpuPredict: return "CPU predict";
  }
  return "?";
}
bool is_gpu(Op op) { return op == Op::kDirtyPsf || op == Op::kDirty || op == Op::kPredict; }
bool is_predict(Op op) { return op == Op::kPredict || op == Op::kCpuPredict; }
int images_of(Op op) { return op == Op::kDirtyPsf || op == Op::kCpuDirtyPsf ? 2 : 1; }

// What the table shows of a plan.
struct PlanShape {
  std::size_t nu = 0, nv = 0, planes = 0;
  int support = 0;
  double sigma = 0;
};
PlanShape shape(const GridPlan& p) { return {p.nu, p.nv, p.planes, p.kernel.support(), p.kernel.sigma()}; }

struct Row {
  std::size_t channel = 0;
  double freq_hz = 0;
  Op op = Op::kDirty;
  PlanShape plan;
  imaging::GridderTimings t;  // medians; CPU rows: wall_ms and samples only
  std::string check = "-";
};

// Results of the last timed calls of one channel, for the GPU − CPU check.
struct Outputs {
  std::vector<double> dirty, psf;
  std::vector<std::complex<double>> vis;
};

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

imaging::GridderTimings median(const std::vector<imaging::GridderTimings>& v) {
  imaging::GridderTimings m = v.front();  // samples, planes and chunks do not change between calls
  for (double imaging::GridderTimings::*f :
       {&imaging::GridderTimings::upload_ms, &imaging::GridderTimings::prep_ms, &imaging::GridderTimings::grid_ms,
        &imaging::GridderTimings::fft_ms, &imaging::GridderTimings::screen_ms, &imaging::GridderTimings::correct_ms,
        &imaging::GridderTimings::download_ms, &imaging::GridderTimings::wall_ms}) {
    std::vector<double> x;
    for (const auto& t : v) x.push_back(t.*f);
    m.*f = median(x);
  }
  return m;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

template <class T>
double relative_difference(const std::vector<T>& gpu, const std::vector<T>& cpu) {
  double diff = 0, peak = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    diff = std::max(diff, std::abs(gpu[i] - cpu[i]));
    peak = std::max(peak, std::abs(cpu[i]));
  }
  return peak > 0 ? diff / peak : diff;
}

std::string fmt(const char* spec, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, x);
  return buf;
}

// Three significant digits, without an exponent.
std::string rate(double x) { return x >= 1000 ? fmt("%.0f", x) : fmt("%.3g", x); }

std::string grouped(std::size_t n) {
  const std::string digits = std::to_string(n);
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

void print_cells(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const std::string& c : cells) line += " " + c + " |";
  std::printf("%s\n", line.c_str());
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

// A model for the degridders: 1,000 point sources of 0.01–1 Jy in the inner half of the image.
std::vector<double> point_model(std::size_t size, std::uint64_t seed) {
  std::vector<double> m(size * size, 0.0);
  data::Rng rng(seed);
  for (int k = 0; k < 1000; ++k) {
    const auto x = static_cast<std::size_t>(rng.uniform(0.25, 0.75) * static_cast<double>(size));
    const auto y = static_cast<std::size_t>(rng.uniform(0.25, 0.75) * static_cast<double>(size));
    m[y * size + x] += rng.uniform(0.01, 1.0);
  }
  return m;
}

#ifdef GPUCLEAN_HAVE_CUDA
// Peak DRAM bandwidth: memory clock × bus width × 2 (double data rate); 0 when unknown.
double memory_bandwidth_gbps(int device) {
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess)
    return 0;
  return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

// One warm-up call, then `repeat` timed ones; the last call's results go to `out`.
imaging::GridderTimings time_gpu(Op op, const GridPlan& plan, const ChannelSamples& s, const std::vector<double>& model,
                                 const BenchGridderOptions& o, Outputs& out) {
  imaging::GpuGridderOptions options;
  options.device = o.gpu;
  const auto call = [&]() {
    if (op == Op::kPredict) {
      imaging::GridderTimings t;
      out.vis = imaging::predict_gpu(plan, model, s.dirty(), options, &t);
      return t;
    }
    imaging::InvertOutput r = imaging::invert_gpu(plan, s.dirty(), true, op == Op::kDirtyPsf, options);
    out.dirty = std::move(r.dirty);
    if (op == Op::kDirtyPsf) out.psf = std::move(r.psf);
    return r.timings;
  };
  call();
  std::vector<imaging::GridderTimings> times;
  for (std::size_t i = 0; i < o.repeat; ++i) times.push_back(call());
  return median(times);
}
#endif

imaging::GridderTimings time_cpu(Op op, const GridPlan& plan, const ChannelSamples& s, const std::vector<double>& model,
                                 const BenchGridderOptions& o, Outputs& out) {
  std::vector<double> walls;
  for (std::size_t i = 0; i < o.cpu_repeat; ++i) {
    const auto t0 = Clock::now();
    if (op == Op::kCpuPredict) {
      out.vis = imaging::predict_cpu(plan, model, s.dirty());
    } else {
      out.dirty = imaging::invert_cpu(plan, s.dirty());
      out.psf = imaging::invert_cpu(plan, s.psf());
    }
    walls.push_back(ms_since(t0));
  }
  imaging::GridderTimings t;
  t.wall_ms = median(walls);
  t.samples = op == Op::kCpuPredict ? s.w.size() : s.w.size() - s.flagged;
  return t;
}

std::string dash_or(bool known, const std::string& text) { return known ? text : "-"; }

void print_rows(const std::vector<Row>& rows, double peak_gbps) {
  print_cells({"ch", "MHz", "op", "samples", "nu×nv", "W", "σ", "planes", "sweeps", "chunks", "upload ms", "prep ms",
               "grid ms", "FFT ms", "screen ms", "correct ms", "download ms", "wall ms", "grid Msamples/s",
               "Mvis/s (wall)", "FFT Gcells/s", "FFT GB/s", "FFT % of peak", "max\\|GPU−CPU\\|/peak"});
  print_cells(std::vector<std::string>(24, "---"));
  for (const Row& r : rows) {
    const imaging::GridderTimings& t = r.t;
    const bool gpu = is_gpu(r.op);
    const double images = images_of(r.op);
    const double samples = static_cast<double>(t.samples);
    const double cells = static_cast<double>(r.plan.nu * r.plan.nv) * static_cast<double>(t.planes) * images;
    const double fft_s = t.fft_ms * 1e-3;
    const double gbps = fft_s > 0 ? cells * kFftBytesPerCell / fft_s / 1e9 : 0;
    print_cells({std::to_string(r.channel), fmt("%.2f", r.freq_hz / 1e6), op_name(r.op), grouped(t.samples),
                 std::to_string(r.plan.nu) + "×" + std::to_string(r.plan.nv), std::to_string(r.plan.support),
                 fmt("%.2f", r.plan.sigma), std::to_string(r.plan.planes),
                 dash_or(gpu, std::to_string(t.planes)), dash_or(gpu, std::to_string(t.chunks)),
                 dash_or(gpu, fmt("%.2f", t.upload_ms)), dash_or(gpu, fmt("%.2f", t.prep_ms)),
                 dash_or(gpu, fmt("%.2f", t.grid_ms)), dash_or(gpu, fmt("%.2f", t.fft_ms)),
                 dash_or(gpu, fmt("%.2f", t.screen_ms)), dash_or(gpu, fmt("%.2f", t.correct_ms)),
                 dash_or(gpu, fmt("%.2f", t.download_ms)), fmt("%.2f", t.wall_ms),
                 dash_or(gpu && t.grid_ms > 0, rate(samples / (t.grid_ms * 1e3))),
                 dash_or(t.wall_ms > 0, rate(samples * images / (t.wall_ms * 1e3))),
                 dash_or(gpu && fft_s > 0, rate(cells / fft_s / 1e9)), dash_or(gpu && fft_s > 0, fmt("%.0f", gbps)),
                 dash_or(gpu && fft_s > 0 && peak_gbps > 0, fmt("%.0f%%", 100 * gbps / peak_gbps)), r.check});
  }
}

// Per operation over all channels: Σ wall, Σ samples, and the GPU's speed-up over the CPU.
void print_summary(const std::vector<Row>& rows) {
  std::printf("\n");
  print_cells({"op", "channels", "samples", "Σ wall ms", "Mvis/s (wall)", "speed-up over CPU"});
  print_cells(std::vector<std::string>(6, "---"));
  const auto total = [&rows](Op op, std::size_t& n, double& samples) {
    double wall = 0;
    n = 0, samples = 0;
    for (const Row& r : rows)
      if (r.op == op) wall += r.t.wall_ms, samples += static_cast<double>(r.t.samples), ++n;
    return wall;
  };
  for (Op op : {Op::kDirtyPsf, Op::kDirty, Op::kPredict, Op::kCpuDirtyPsf, Op::kCpuPredict}) {
    std::size_t n = 0, n_cpu = 0;
    double samples = 0, cpu_samples = 0;
    const double wall = total(op, n, samples);
    if (n == 0) continue;
    std::string speedup = "-";
    if (op == Op::kDirtyPsf || op == Op::kPredict) {
      const double cpu_wall = total(op == Op::kDirtyPsf ? Op::kCpuDirtyPsf : Op::kCpuPredict, n_cpu, cpu_samples);
      if (n_cpu == n && wall > 0) speedup = fmt("%.1f×", cpu_wall / wall);
    }
    print_cells({op_name(op), std::to_string(n), grouped(static_cast<std::size_t>(samples)), fmt("%.2f", wall),
                 rate(samples * images_of(op) / (wall * 1e3)), speedup});
  }
}

void run_case(const Case& c, const BenchGridderOptions& o, bool gpu, bool cpu, double peak_gbps) {
  const auto t_case = Clock::now();
  const std::size_t times = std::max<std::size_t>(1, (c.rows + 1008) / 2016);
  const SyntheticTrack track = meerkat_track(times, c.hours, o.dec_deg);
  const std::vector<double> freqs = channel_frequencies(c.channels, c.low_hz, c.high_hz);
  const imaging::ImageGeometry image{c.size, c.size, c.scale_arcsec * std::numbers::pi / (180.0 * 3600.0)};
  const std::vector<double> model = point_model(c.size, o.seed + 1);

  std::printf("\n### bench gridder, case %s: %zu² pixels of %g″, %zu channels over %.2f–%.2f GHz, %s rows (%zu "
              "integrations × %s baselines over %g h centred on transit, dec %g°)\n\n",
              c.name.c_str(), c.size, c.scale_arcsec, c.channels, c.low_hz / 1e9, c.high_hz / 1e9,
              grouped(track.u.size()).c_str(), times, grouped(track.baselines).c_str(), c.hours, o.dec_deg);
  std::fflush(stdout);
  std::vector<Row> rows;
  for (std::size_t ch = 0; ch < c.channels; ++ch) {
    const ChannelSamples s = channel_samples(track, freqs[ch], kFlagged, o.seed + ch);
    const std::size_t gridded = s.w.size() - s.flagged;
    // As `gpuclean image`: the inversion's plan over the samples it grids, the degridder's over
    // every sample (imaging/image_run.cpp, predict_run.cpp).
    const GridPlan invert_plan = imaging::choose_grid_plan(image, o.epsilon, imaging::w_range(s.w, s.weight), gridded);
    const GridPlan predict_plan = imaging::choose_grid_plan(image, o.epsilon, imaging::w_range(s.w, s.unit), s.w.size());
#ifdef GPUCLEAN_HAVE_CUDA
    if (gpu && ch == 0) {  // resident or streamed: the first channel's plan stands for the others
      imaging::GpuGridderOptions options;
      options.device = o.gpu;
      std::printf("%s (channel 0, dirty+PSF)\n\n",
                  imaging::plan_gpu_gridder_memory(invert_plan, gridded, 2, options).describe().c_str());
    }
#endif
    std::vector<Op> ops;
    if (gpu) ops.insert(ops.end(), {Op::kDirtyPsf, Op::kDirty, Op::kPredict});
    if (cpu) ops.insert(ops.end(), {Op::kCpuDirtyPsf, Op::kCpuPredict});
    Outputs gpu_psf_pass, gpu_dirty, gpu_predict, cpu_invert, cpu_predict;
    const std::size_t first = rows.size();
    for (Op op : ops) {
      Row r;
      r.channel = ch, r.freq_hz = freqs[ch], r.op = op;
      const GridPlan& plan = is_predict(op) ? predict_plan : invert_plan;
      r.plan = shape(plan);
      Outputs& out = op == Op::kDirtyPsf   ? gpu_psf_pass
                     : op == Op::kDirty    ? gpu_dirty
                     : op == Op::kPredict  ? gpu_predict
                     : op == Op::kCpuDirtyPsf ? cpu_invert
                                              : cpu_predict;
#ifdef GPUCLEAN_HAVE_CUDA
      r.t = is_gpu(op) ? time_gpu(op, plan, s, model, o, out) : time_cpu(op, plan, s, model, o, out);
#else
      r.t = time_cpu(op, plan, s, model, o, out);
#endif
      std::fprintf(stderr, "case %s channel %zu %s: %zu samples, nu %zu, W %d, %zu planes: wall %.2f ms\n",
                   c.name.c_str(), ch, op_name(op), r.t.samples, r.plan.nu, r.plan.support, r.plan.planes,
                   r.t.wall_ms);
      rows.push_back(std::move(r));
    }
    if (gpu && cpu) {
      for (std::size_t i = first; i < rows.size(); ++i) {
        if (rows[i].op == Op::kDirtyPsf)
          rows[i].check = "dirty " + fmt("%.1e", relative_difference(gpu_psf_pass.dirty, cpu_invert.dirty)) + ", PSF " +
                          fmt("%.1e", relative_difference(gpu_psf_pass.psf, cpu_invert.psf));
        if (rows[i].op == Op::kDirty) rows[i].check = fmt("%.1e", relative_difference(gpu_dirty.dirty, cpu_invert.dirty));
        if (rows[i].op == Op::kPredict) rows[i].check = fmt("%.1e", relative_difference(gpu_predict.vis, cpu_predict.vis));
      }
    }
  }
  print_rows(rows, peak_gbps);
  print_summary(rows);
  std::fflush(stdout);
  std::fprintf(stderr, "case %s took %.1f s\n", c.name.c_str(), ms_since(t_case) / 1e3);
}

}  // namespace

int run_bench_gridder(const BenchGridderOptions& o) {
  const bool gpu = cuda::built_with_cuda() && cuda::has_usable_device();
  if (!gpu && !o.cpu)
    throw RuntimeFailure("bench gridder needs a usable CUDA GPU (" + cuda::describe_device() +
                         "); --cpu alone times the CPU gridder");
  std::vector<std::string> names = {o.cases};
  if (o.cases == "all") names = {"A", "B", "C"};
  double peak_gbps = 0;
#ifdef GPUCLEAN_HAVE_CUDA
  if (gpu) peak_gbps = memory_bandwidth_gbps(o.gpu);
#endif
  const unsigned cores = std::thread::hardware_concurrency();
  std::printf("## gpuclean bench gridder\n\n");
  if (gpu)
    std::printf("- GPU: %s; memory bandwidth %.0f GB/s (memory clock × bus width × 2)\n",
                cuda::describe_device().c_str(), peak_gbps);
  else
    std::printf("- GPU: none (%s): the CPU reference only\n", cuda::describe_device().c_str());
  std::printf("- CPU: %s, %u cores; invert_cpu and predict_cpu on %d OpenMP threads, median of %zu call(s) (dirty+PSF: "
              "two invert_cpu calls)\n", cpu_model().c_str(), cores, omp_get_max_threads(), o.cpu_repeat);
  std::printf("- samples: synthetic MeerKAT uvw (64 pads of data/arrays.cpp, as data/simulate_ms.py), unit weights, "
              "%.0f%% flagged (weight 0, not gridded), random visibilities: the timings do not depend on the values\n",
              100 * kFlagged);
  std::printf("- ε = %g, one plan per output channel (choose_grid_plan over the channel's unflagged samples; "
              "predict: over all of them, as `gpuclean image -predict`)\n", o.epsilon);
  std::printf("- GPU: median of %zu calls after one warm-up, phases from CUDA events (grid includes zeroing the grids; "
              "predict: grid = degridding, screen = the model onto the grid); wall: host clock of the whole call, host "
              "sorting included\n", o.repeat);
  std::printf("- grid Msamples/s = samples / grid time (a dirty+PSF sample counts once); Mvis/s (wall) = samples × "
              "images / wall (dirty+PSF: 2 images); FFT Gcells/s = nu·nv × sweeps × images / FFT time; FFT GB/s = "
              "%.0f B per cell transformed (a read and a write of the complex-float grid per axis pass; cuFFT takes 2–3 "
              "passes at these sizes, so a lower bound of its traffic) / FFT time\n", kFftBytesPerCell);
  for (const std::string& name : names) {
    const bool cpu = !o.no_cpu && (o.cpu || name == "A");
    run_case(with_overrides(preset(name), o), o, gpu, cpu, peak_gbps);
  }
  return 0;
}

}  // namespace gpuclean::app

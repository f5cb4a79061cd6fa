#include "app/cube/cube_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app/cube/cube_output.hpp"
#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/pipeline.hpp"
#include "app/plane_io.hpp"
#include "clean/clean_mask.hpp"
#include "clean/errors.hpp"
#include "clean/deconvolution.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/log_polynomial_fit.hpp"
#include "clean/plan_workers.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Planes cleaned at once on one GPU: a plane's minor cycle is mostly one SM's chain, so more at
// once fill more of the GPU (64 planes of 2048^2 on the H100: 4 at once 13.5, 8 at once 25.8,
// 16 at once 44.7 channels/s). With several GPUs the run as a whole cleans that many at once,
// at least kLeastAutomaticParallelPlanes on each GPU (clean::automatic_parallel_per_gpu: each
// worker's first-run setup serialises, so a worker should clean several planes).
constexpr std::size_t kMaxAutomaticParallelPlanes = 16;
constexpr std::size_t kLeastAutomaticParallelPlanes = 4;

// -v: where a GPU run's setup went (the JSON's stage_seconds.setup_parts).
std::string setup_parts_line(const clean::CleanResult& r) {
  std::string line;
  char buf[96];
  for (const auto& [part, value] : r.diagnostics.setup_parts) {
    if (part == "fft_plans_made")
      std::snprintf(buf, sizeof buf, "%s%s %.0f", line.empty() ? "" : ", ", part.c_str(), value);
    else
      std::snprintf(buf, sizeof buf, "%s%s %.1f ms", line.empty() ? "" : ", ", part.c_str(), value * 1e3);
    line += buf;
  }
  return line;
}

// The GPU workers the plan may give each GPU (PlanRequest::parallel).
std::size_t parallel_per_gpu(const RunOptions& o, std::size_t gpus) {
  return o.cube.parallel_planes ? o.cube.parallel_planes
                                : clean::automatic_parallel_per_gpu(gpus, kMaxAutomaticParallelPlanes,
                                                                    kLeastAutomaticParallelPlanes);
}

// Workers worth making (streams, pinned staging, cuFFT plans) while the planes are read: plan_run's
// count when it is known before the read, a WSClean set of independent planes (one group a plane;
// the memory's cap is not known yet, so a worker may be made that cleans nothing). 0 otherwise,
// or with GPUCLEAN_CUBE_PREPARE=0 (to compare).
std::size_t workers_to_prepare(const RunOptions& o, const std::optional<io::WscleanChannelSet>& set,
                               std::size_t gpus) {
  const char* env = std::getenv("GPUCLEAN_CUBE_PREPARE");
  if (env && std::string(env) == "0") return 0;
  if (!set || o.settings.join_channels || o.settings.join_polarizations) return 0;
  std::size_t planes = 0;
  for (const auto& pol : set->dirty) planes += pol.size();
  return planes ? clean::plan_workers(planes, gpus, parallel_per_gpu(o, gpus), planes) : 0;
}

// The input's planes as the run facade's work table.
clean::WorkTable cube_table(const CubeInput& in, const std::optional<clean::HostImage>& fits_mask) {
  clean::WorkTable t;
  t.width = in.planes.front().dirty.width;
  t.height = in.planes.front().dirty.height;
  t.channels = in.channels;
  t.polarizations = in.stokes;
  t.fits_mask = fits_mask ? &*fits_mask : nullptr;
  for (const InputPlane& p : in.planes)
    t.planes.push_back({&p.dirty, &p.psf, p.channel, p.stokes, p.pol, p.frequency_hz, p.weight, &p.beam});
  return t;
}

}  // namespace

std::vector<int> cube_gpus(const CubeOptions& c) {
  if (!c.gpus.empty()) return c.gpus;
  std::vector<int> out;
  if (!cuda::built_with_cuda() || !cuda::has_usable_device()) return out;
  const int visible = cuda::device_count();
  for (int g = 0; g < visible && (c.max_gpus == 0 || out.size() < c.max_gpus); ++g) out.push_back(g);
  return out;
}

void validate_cube_options(const RunOptions& o) {
  const CubeOptions& c = o.cube;
  const clean::CleanSettings& s = o.settings;
  clean::validate(s);  // the join and fit settings among them
  if (!c.source_list.empty() && !s.join_channels)
    throw clean::InvalidSettings("--save-source-list writes joined-channel components; add --join-channels.");
  if (c.wsclean_channels && !o.psf.empty())
    throw clean::InvalidSettings("with --wsclean-channels give WSClean's NAME alone (its PSFs are NAME-0000-psf.fits "
                                 "...), not a PSF argument.");
  if (!o.quicklook.empty() || !o.noise_map.empty())
    throw clean::InvalidSettings("--quicklook and --noise-map take one image; leave them out for a cube or channel set.");
  if (s.compare_select && (s.algorithm != clean::Algorithm::kClark || s.device == clean::Device::kCpu))
    throw clean::InvalidSettings("--compare-select compares the GPU selection backends inside GPU Clark; it needs "
                                 "--algorithm clark on a usable GPU (--device gpu or auto).");
}

std::vector<std::string> cube_outputs(const RunOptions& o) {
  if (!o.cube.wsclean_channels) return cube_output_paths(o, nullptr);
  const io::WscleanChannelSet set = io::find_wsclean_channels(o.dirty);
  return cube_output_paths(o, &set);
}

nlohmann::json run_cube(const RunOptions& o) {
  const auto t_start = Clock::now();
  clean::validate(o.settings);
  validate_cube_options(o);
  const Log log(o.verbosity, o.json == "-");
  // The outputs are checked before any work: a WSClean set's names need only its file list.
  std::optional<io::WscleanChannelSet> set;
  if (o.cube.wsclean_channels) set = io::find_wsclean_channels(o.dirty);
  {
    io::WriteOptions base;
    base.overwrite = o.overwrite;
    base.inputs = {o.dirty, o.psf};
    if (set) {
      for (const auto& pol : set->dirty) base.inputs.insert(base.inputs.end(), pol.begin(), pol.end());
      base.inputs.insert(base.inputs.end(), set->psf.begin(), set->psf.end());
    }
    if (!o.fits_mask.empty()) base.inputs.push_back(o.fits_mask);
    const std::vector<std::string> outputs = cube_output_paths(o, set ? &*set : nullptr);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      for (std::size_t j = i + 1; j < outputs.size(); ++j)
        if (outputs[i] == outputs[j])
          throw clean::InvalidSettings("'" + outputs[i] + "' is given as two different outputs; give each its own name.");
      io::check_output_path(outputs[i], base);
    }
  }
  std::string note;
  clean::Device device = clean::resolve_device(o.settings.device, &note);
  if (!note.empty()) log.verbose("%s", note.c_str());

  // Every GPU's context and first plans are readied while the planes are read, so that neither
  // the clean stage nor its first planes on each GPU pay for them; so are the workers' streams and
  // pinned staging when their count is known before the read (workers_to_prepare).
  clean::DeconvolverPool workers;  // outlives warm_up, which fills it
  double prepare_seconds = 0.0;
  std::size_t prepared = 0;
  std::size_t free_before = 0;  // the least free GPU memory before the workers were prepared
  std::jthread warm_up;  // joined on every way out
  if (device == clean::Device::kGpu) {
    const std::vector<int> list = cube_gpus(o.cube);
    std::vector<int> gpus = list;
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    prepared = workers_to_prepare(o, set, list.size());
    // The first plane's size, for the workers' cuFFT plans (cuFFT's plan making waits for the
    // whole device: made now, no other worker's CLEAN waits for it). The read reports a bad file.
    std::size_t width = 0, height = 0;
    if (prepared) {
      try {
        const io::FitsImage shape = io::read_fits_shape(set->dirty.front().front());
        width = shape.width;
        height = shape.height;
      } catch (const std::exception&) {
      }
    }
    warm_up = std::jthread([&, gpus, list, width, height] {
      try {  // preparing is an optimisation: what fails here, the clean stage meets and reports
        clean::warm_up_gpus(gpus);
        if (!prepared) return;
        free_before = clean::least_free_gpu_memory(list);
        const auto t0 = Clock::now();
        clean::prepare_workers(workers, prepared, o.settings.algorithm, clean::Device::kGpu, list, width, height);
        prepare_seconds = since(t0);
      } catch (...) {
      }
    });
  }

  const auto t_read = Clock::now();
  const CubeInput in = load_cube_input(o, log);
  std::optional<clean::HostImage> fits_mask;
  if (!o.fits_mask.empty()) {
    fits_mask = to_host(io::read_fits_image(o.fits_mask));
  }
  CubeRunResult run;
  clean::WorkTable table = cube_table(in, fits_mask);
  clean::group_planes(table, o.settings);
  for (const auto& g : table.groups) run.groups.push_back({g});
  if (o.settings.compare_select && run.groups.size() != 1)
    throw clean::InvalidSettings("--compare-select compares the selections of one CLEAN run; this input makes " +
                                 std::to_string(run.groups.size()) +
                                 " (join all its planes: --join-channels on one Stokes parameter, or "
                                 "--join-polarizations on one channel).");
  run.seconds_read = since(t_read);

  if (warm_up.joinable()) warm_up.join();
  if (prepared) log.verbose("prepared %zu GPU workers in %.3f s alongside the read", prepared, prepare_seconds);
  clean::PlanRequest request;
  if (device == clean::Device::kGpu) {
    request.gpus = cube_gpus(o.cube);
    request.parallel = parallel_per_gpu(o, request.gpus.size());
    request.free_bytes = free_before;  // the prepared workers' memory is in the plan's need already
  }
  const clean::RunPlan plan = clean::plan_run(table, o.settings, device, request);
  if (!plan.fallback.empty()) log.warn("%s", plan.fallback.c_str());
  device = plan.device;
  if (device != clean::Device::kGpu) workers.clear();  // fell back to the CPU
  if (workers.size() > plan.workers) workers.resize(plan.workers);  // prepared beyond what fits
  if (o.settings.compare_select && device != clean::Device::kGpu)
    throw clean::InvalidSettings("--compare-select compares the GPU selection backends; this run is on the CPU.");
  run.device = std::string(clean::to_string(device));
  const char* mode = !table.join                          ? "independent planes"
                     : *table.join == clean::Join::kChannels ? "joined channels"
                                                            : "joined polarizations";
  const std::string on = device == clean::Device::kGpu && plan.gpus.size() > 1
                           ? std::to_string(std::min(plan.gpus.size(), plan.workers)) + " GPUs"
                           : run.device;
  log.info("%s: %zu channel(s) x %zu Stokes, %zux%zu, %s; %zu CLEAN run(s) on %s, %zu at once",
           o.dirty.c_str(), in.channels, in.stokes, table.width, table.height, mode, run.groups.size(), on.c_str(),
           plan.workers);
  if (plan.device_planes > 0)
    log.info("the joined planes do not fit on the GPU together: %zu at a time stream through it each major cycle",
             plan.device_planes);
  if (!plan.split_gpus.empty())
    log.info("the joined planes are split over %zu GPUs in plane order: %.2f GiB of GPU memory on each at most",
             plan.split_gpus.size(), static_cast<double>(plan.gpu_bytes) / (1ull << 30));
  else if (device == clean::Device::kGpu)
    log.verbose("GPU memory estimate: %.2f GiB per CLEAN run", static_cast<double>(plan.gpu_bytes) / (1ull << 30));

  // Every group is cleaned by one worker; each GPU worker has its own deconvolver, so its own
  // stream and workspaces.
  const auto t_clean = Clock::now();
  clean::RunRecord observed({}, o.settings.compare_select);  // one group when comparing (checked above)
  clean::ProblemExtras extras;
  extras.observer = &observed;
  clean::Deconvolution deconvolution(o.settings, table, plan, &extras);
  // The workers' GPU resources outlive the clean stage: they are released while the outputs are
  // written (streams, pinned staging and cuFFT plans: tens of driver calls a worker, many of them
  // process-wide locked or synchronising), not one worker after another inside the stage.
  std::jthread release;  // joined before the summary is made
  run.results = deconvolution.run({}, [&](std::size_t g, const clean::CleanResult& r) {
    const CleanGroup& group = run.groups[g];
    const InputPlane& first = in.planes[group.planes[0]];
    const std::string what = group.joined() ? "group of " + std::to_string(group.planes.size()) + " planes"
                                            : "channel " + std::to_string(first.channel) +
                                                  (first.pol.empty() ? "" : " " + first.pol);
    log.info("  %s: %zu components, %zu major cycles, stopped on %s, peak residual %.4e Jy/beam", what.c_str(),
             r.stop.iterations, r.stop.major_cycles, std::string(clean::to_string(r.stop.reason)).c_str(), r.stop.peak_residual);
    if (!r.diagnostics.setup_parts.empty())
      log.verbose("  %s: setup %.1f ms: %s", what.c_str(), r.diagnostics.seconds.setup * 1e3,
                  setup_parts_line(r).c_str());
  }, &workers);
  if (device == clean::Device::kGpu) run.group_gpu = deconvolution.group_gpus();
  run.seconds_clean = since(t_clean);
  run.select_comparison = std::move(observed.select_comparison);
  if (device == clean::Device::kGpu && !workers.empty()) {
    release = std::jthread([&log, pool = std::move(workers)]() mutable {
      const auto t0 = Clock::now();
      const std::size_t n = pool.size();
      pool.clear();
      log.verbose("released %zu GPU workers' resources in %.3f s, alongside the writes", n, since(t0));
    });
  }

  const nlohmann::json summary = write_cube_outputs(o, in, run);
  if (release.joinable()) release.join();
  std::size_t components = 0;
  for (const auto& r : run.results) components += r.stop.iterations;
  log.info("done: %zu planes, %zu components; %.2f s (read %.2f, clean %.2f: %.1f planes/s)", in.planes.size(),
           components, since(t_start), run.seconds_read, run.seconds_clean,
           static_cast<double>(in.planes.size()) / std::max(run.seconds_clean, 1e-9));
  return summary;
}

}  // namespace gpuclean::app

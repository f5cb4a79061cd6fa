#include "app/cube/cube_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "app/cube/cube_output.hpp"
#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/pipeline.hpp"
#include "app/plane_io.hpp"
#include "clean/clean_mask.hpp"
#include "clean/errors.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/log_polynomial_fit.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Planes cleaned at once on one GPU: a plane's minor cycle is mostly one SM's chain, so more at
// once fill more of the GPU (64 planes of 2048^2 on the H100: 4 at once 13.5, 8 at once 25.8,
// 16 at once 44.7 channels/s).
constexpr std::size_t kMaxAutomaticParallelPlanes = 16;

// What one group's CLEAN needs, kept alive while it runs.
struct GroupProblem {
  clean::JoinedPlanes joined;
  clean::JoinedProblemImages images;  // joined: the integrated image and PSF
  std::vector<std::uint8_t> mask;
  clean::PixelGaussian beam;
};

void prepare_group(const CubeInput& in, const RunOptions& o, const CleanGroup& g,
                   const std::optional<clean::HostImage>& fits_mask, GroupProblem& gp) {
  const clean::CleanSettings& s = o.settings;
  if (!g.joined()) {
    const InputPlane& p = in.planes[g.planes[0]];
    gp.mask = clean::make_clean_mask(p.dirty, fits_mask ? &*fits_mask : nullptr, s.clean_border_percent);
    gp.beam = p.beam;
    return;
  }
  gp.joined.join = *o.settings.join();
  gp.joined.fit = o.settings.spectral_fit();
  for (std::size_t i : g.planes) {
    const InputPlane& p = in.planes[i];
    gp.joined.planes.push_back({&p.dirty, &p.psf, p.frequency_hz, p.weight, &p.beam});
  }
  if (gp.joined.join == clean::Join::kPolarizations) {
    std::vector<std::string> pols;
    for (std::size_t i : g.planes) pols.push_back(in.planes[i].pol);
    gp.joined.polarization_factor = clean::polarization_factor(pols);
  }
  gp.images = clean::joined_problem_images(gp.joined);
  gp.mask = clean::make_clean_mask(gp.images.dirty, fits_mask ? &*fits_mask : nullptr, s.clean_border_percent);
  gp.beam = s.beam_shape ? in.planes[g.planes[0]].beam : clean::fit_psf_beam(gp.images.psf, s.beam_fit);
}

// How a cube runs on the GPU: workers at once (0: not even one fits) and, for joined planes, how
// many planes each keeps on the device (0: all; fewer stream through it).
struct GpuPlan {
  std::size_t workers = 0;
  std::size_t device_planes = 0;
};

GpuPlan gpu_plan(const CubeInput& in, const RunOptions& o, const std::vector<CleanGroup>& groups,
                 const std::vector<int>& gpus) {
#ifdef GPUCLEAN_HAVE_CUDA
  const InputPlane& p = in.planes.front();
  clean::RunShape shape{.width = p.dirty.width,
                        .height = p.dirty.height,
                        .psf_width = p.psf.image.width,
                        .psf_height = p.psf.image.height,
                        .beam = p.beam};
  // Every GPU gets as many workers as the one with the least free memory holds.
  std::size_t budget = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const cuda::ScopedDevice on(gpus[i]);
    const std::size_t free = cuda::device_memory().free_bytes * 9 / 10;
    budget = i == 0 ? free : std::min(budget, free);
  }
  const std::size_t per_gpu = o.cube.parallel_planes ? o.cube.parallel_planes : kMaxAutomaticParallelPlanes;
  const std::size_t wanted = per_gpu * std::max<std::size_t>(gpus.size(), 1);
  auto workers = [&](std::size_t one) {
    return one > 0 ? std::min({budget / one * gpus.size(), wanted, groups.size()}) : std::size_t{0};
  };
  if (!groups.front().joined()) return {workers(clean::gpu_bytes_needed(shape, o.settings)), 0};
  shape.planes = groups.front().planes.size();
  const std::size_t planes = shape.planes;
  auto joined_bytes = [&](std::size_t block) {
    shape.device_planes = block;
    return clean::gpu_bytes_needed(shape, o.settings);
  };
  if (const std::size_t all = joined_bytes(0); all <= budget) return {workers(all), 0};
  // One group at a time, its planes streamed through the device in the largest block that fits.
  for (std::size_t block = planes - 1; block >= 1; --block)
    if (joined_bytes(block) <= budget) return {1, block};
  return {};
#else
  (void)in, (void)o, (void)groups, (void)gpus;
  return {};
#endif
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

void for_each_clean(std::size_t count, std::size_t workers, clean::Algorithm algorithm, clean::Device device,
                    const std::function<void(std::size_t, clean::Deconvolver&)>& run, DeconvolverPool* pool,
                    const std::vector<int>& gpus) {
  workers = std::max<std::size_t>(workers, 1);
  DeconvolverPool local;
  if (!pool) pool = &local;
  if (pool->size() < workers) pool->resize(workers);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&](std::size_t w) {
    try {
      std::optional<cuda::ScopedDevice> on;
      if (device == clean::Device::kGpu && !gpus.empty()) on.emplace(gpus[w % gpus.size()]);
      std::unique_ptr<clean::Deconvolver>& deconvolver = (*pool)[w];
      if (!deconvolver) deconvolver = clean::make_deconvolver(algorithm, device);
      for (std::size_t g = next++; g < count; g = next++) run(g, *deconvolver);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(worker, w);
  worker(0);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

std::vector<CleanGroup> clean_groups(const CubeInput& in, const clean::CleanSettings& o) {
  std::vector<CleanGroup> groups;
  if (o.join_channels) {
    if (in.channels < 2)
      throw clean::InvalidSettings("--join-channels needs at least two channels; the input has one.");
    for (std::size_t s = 0; s < in.stokes; ++s) {
      CleanGroup g;
      for (std::size_t c = 0; c < in.channels; ++c) g.planes.push_back(s * in.channels + c);
      groups.push_back(std::move(g));
    }
    return groups;
  }
  if (o.join_polarizations) {
    if (in.stokes < 2)
      throw clean::InvalidSettings("--join-polarizations needs at least two Stokes planes; the input has one.");
    for (std::size_t c = 0; c < in.channels; ++c) {
      CleanGroup g;
      for (std::size_t s = 0; s < in.stokes; ++s) g.planes.push_back(s * in.channels + c);
      groups.push_back(std::move(g));
    }
    return groups;
  }
  for (std::size_t i = 0; i < in.planes.size(); ++i) groups.push_back({{i}});
  return groups;
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
  clean::Device device = resolve_device(o.settings.device, log);
  clean::make_deconvolver(o.settings.algorithm, device);  // refuses a device this build lacks

  const auto t_read = Clock::now();
  const CubeInput in = load_cube_input(o, log);
  std::optional<clean::HostImage> fits_mask;
  if (!o.fits_mask.empty()) {
    fits_mask = to_host(io::read_fits_image(o.fits_mask));
  }
  CubeRunResult run;
  run.groups = clean_groups(in, o.settings);
  if (o.settings.compare_select && run.groups.size() != 1)
    throw clean::InvalidSettings("--compare-select compares the selections of one CLEAN run; this input makes " +
                                 std::to_string(run.groups.size()) +
                                 " (join all its planes: --join-channels on one Stokes parameter, or "
                                 "--join-polarizations on one channel).");
  run.seconds_read = since(t_read);

  std::size_t workers = 1, device_planes = 0;
  std::vector<int> gpus;
  if (device == clean::Device::kGpu) {
    gpus = cube_gpus(o.cube);
    const GpuPlan plan = gpu_plan(in, o, run.groups, gpus);
    workers = plan.workers;
    device_planes = plan.device_planes;
    if (workers == 0) {
      if (o.settings.device == clean::Device::kGpu)
        throw RuntimeFailure("one plane group of this input does not fit in the GPU's free memory; use --device cpu.");
      log.warn("one plane group does not fit in the GPU's free memory; running on the CPU instead");
      device = clean::Device::kCpu;
      workers = 1;
    }
  }
  if (o.settings.compare_select && device != clean::Device::kGpu)
    throw clean::InvalidSettings("--compare-select compares the GPU selection backends; this run is on the CPU.");
  run.device = std::string(clean::to_string(device));
  const char* mode = o.settings.join_channels ? "joined channels" : o.settings.join_polarizations ? "joined polarizations"
                                                                                           : "independent planes";
  const std::string on = device == clean::Device::kGpu && gpus.size() > 1
                           ? std::to_string(std::min(gpus.size(), workers)) + " GPUs"
                           : run.device;
  log.info("%s: %zu channel(s) x %zu Stokes, %zux%zu, %s; %zu CLEAN run(s) on %s, %zu at once",
           o.dirty.c_str(), in.channels, in.stokes, in.planes.front().dirty.width, in.planes.front().dirty.height, mode,
           run.groups.size(), on.c_str(), workers);
  if (device_planes > 0)
    log.info("the joined planes do not fit on the GPU together: %zu at a time stream through it each major cycle",
             device_planes);

  // Every group is cleaned by one worker; each GPU worker has its own deconvolver, so its own
  // stream and workspaces.
  const auto t_clean = Clock::now();
  run.results.resize(run.groups.size());
  if (device == clean::Device::kGpu) run.group_gpu.assign(run.groups.size(), -1);
  for_each_clean(run.groups.size(), workers, o.settings.algorithm, device, [&](std::size_t g, clean::Deconvolver& d) {
    GroupProblem gp;
    prepare_group(in, o, run.groups[g], fits_mask, gp);
    gp.joined.device_planes = device_planes;
    const CleanGroup& group = run.groups[g];
    const InputPlane& first = in.planes[group.planes[0]];
    clean::CleanProblem problem{group.joined() ? gp.images.dirty : first.dirty,
                                group.joined() ? gp.images.psf : first.psf, gp.mask, &gp.beam};
    if (group.joined()) problem.joined = &gp.joined;
    run.results[g] = d.run(problem, o.settings, {});
    if (device == clean::Device::kGpu) run.group_gpu[g] = cuda::current_gpu();
    const clean::CleanResult& r = run.results[g];
    const std::string what = group.joined() ? "group of " + std::to_string(group.planes.size()) + " planes"
                                            : "channel " + std::to_string(first.channel) +
                                                  (first.pol.empty() ? "" : " " + first.pol);
    log.info("  %s: %zu components, %zu major cycles, stopped on %s, peak residual %.4e Jy/beam", what.c_str(),
             r.iterations, r.major_cycles, std::string(clean::to_string(r.reason)).c_str(), r.peak_residual);
  }, nullptr, gpus);
  run.seconds_clean = since(t_clean);

  const nlohmann::json summary = write_cube_outputs(o, in, run);
  std::size_t components = 0;
  for (const auto& r : run.results) components += r.iterations;
  log.info("done: %zu planes, %zu components; %.2f s (read %.2f, clean %.2f: %.1f planes/s)", in.planes.size(),
           components, since(t_start), run.seconds_read, run.seconds_clean,
           static_cast<double>(in.planes.size()) / std::max(run.seconds_clean, 1e-9));
  return summary;
}

}  // namespace gpuclean::app

// gpuclean batch: a reader stage (FITS in, checks, PSF and beam), clean workers (several per
// GPU, each on its own streams, or one CPU worker), and a writer stage (FITS, PNG, JSON out),
// joined by bounded queues. Each worker keeps its deconvolvers, and with them its CUDA streams,
// cuFFT plans, pinned staging, cached spectra and pooled device memory, from one observation to
// the next. Every observation is cleaned by one worker from start to end, exactly as it would be
// alone: the results do not depend on how many run at once.

#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include "app/batch/batch_options.hpp"
#include "app/batch/batch_report.hpp"
#include "app/batch/bounded_queue.hpp"
#include "app/batch/manifest.hpp"
#include "app/batch/outcome.hpp"
#include "app/batch/progress.hpp"
#include "app/batch/shard.hpp"
#include "app/batch/streams.hpp"
#include "app/cube/cube_run.hpp"
#include "app/errors.hpp"
#include "app/exit_codes.hpp"
#include "app/failure.hpp"
#include "app/pipeline.hpp"
#include "clean/errors.hpp"
#include "clean/gpu_memory.hpp"
#include "io/fits_reader.hpp"
#include "io/text_writer.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Work {
  const BatchJob* job = nullptr;
  ObservationOutcome outcome;
  Clock::time_point started;
  std::optional<LoadedObservation> obs;
  std::optional<clean::CleanResult> result;
  std::optional<RunOptions> cube;  ///< a WSClean channel set: the cube command's options
};
using WorkPtr = std::unique_ptr<Work>;

void fail(Work& w, std::exception_ptr e) {
  const Failure f = classify(e);
  w.outcome.status = OutcomeStatus::kFailed;
  w.outcome.reason = f.message;
  w.outcome.exit_code = to_int(f.code);
  w.obs.reset();
  w.result.reset();
}

bool is_fits(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".fits" || ext == ".fit" || ext == ".fts";
}

// --resume: every output there (FITS ones whole) means done; some there means redo, replacing them.
enum class Resume { kRun, kSkip, kRedo };
Resume resume_state(const RunOptions& o) {
  std::size_t present = 0;
  bool complete = true;
  const auto outputs = o.cube.wsclean_channels ? cube_outputs(o) : output_paths(o);
  for (const std::string& p : outputs) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      complete = false;
      continue;
    }
    ++present;
    if (is_fits(p) && !io::fits_file_complete(p)) complete = false;
  }
  if (complete) return Resume::kSkip;
  return present ? Resume::kRedo : Resume::kRun;
}

class Pipeline {
 public:
  /// `worker_gpus`: the GPU of each clean worker (several may share one); empty: one CPU worker.
  Pipeline(const BatchOptions& options, std::vector<const BatchJob*> jobs, std::vector<int> worker_gpus,
           int io_threads, Progress& progress)
      : options_(options), jobs_(std::move(jobs)), gpus_(std::move(worker_gpus)), progress_(progress),
        workers_(gpus_.empty() ? 1 : gpus_.size()), io_threads_(io_threads),
        to_clean_(static_cast<std::size_t>(options.queue_depth) * workers_),
        to_write_(static_cast<std::size_t>(options.queue_depth) * workers_) {}

  std::vector<ObservationOutcome> run() {
    std::vector<std::thread> readers, workers, writers;
    for (int i = 0; i < io_threads_; ++i) readers.emplace_back([this] { share_cores(); read_loop(); });
    for (std::size_t w = 0; w < workers_; ++w)
      workers.emplace_back([this, w] { clean_loop(gpus_.empty() ? -1 : gpus_[w]); });
    for (int i = 0; i < io_threads_; ++i) writers.emplace_back([this] { share_cores(); write_loop(); });
    for (auto& t : readers) t.join();
    to_clean_.close();
    for (auto& t : workers) t.join();
    to_write_.close();
    for (auto& t : writers) t.join();
    std::sort(outcomes_.begin(), outcomes_.end(),
              [](const ObservationOutcome& a, const ObservationOutcome& b) { return a.index < b.index; });
    return outcomes_;
  }

  double clean_stage_seconds() const { return clean_busy_.load(); }

 private:
  void share_cores() const {
    omp_set_num_threads(io_openmp_team(io_threads_, static_cast<unsigned>(omp_get_num_procs())));
  }

  void read_loop() {
    for (std::size_t i; (i = next_.fetch_add(1)) < jobs_.size();) {
      auto w = std::make_unique<Work>();
      w->job = jobs_[i];
      w->started = Clock::now();
      ObservationOutcome& o = w->outcome;
      const RunOptions& opt = w->job->options;
      o.index = w->job->index;
      o.name = w->job->name;
      o.dirty = opt.dirty;
      o.psf = opt.psf;
      try {
        o.outputs = opt.cube.wsclean_channels ? cube_outputs(opt) : output_paths(opt);
        if (!w->job->error.empty()) throw clean::InvalidInput(w->job->error);
        RunOptions run = opt;
        if (options_.resume) {
          const Resume r = resume_state(opt);
          if (r == Resume::kSkip) {
            o.status = OutcomeStatus::kSkipped;
            o.reason = "outputs complete";
            to_write_.push(std::move(w));
            continue;
          }
          if (r == Resume::kRedo) run.overwrite = true;  // our own partial outputs from an earlier run
        }
        if (run.cube.wsclean_channels) {  // a channel set: read, cleaned and written by its clean worker
          w->cube = std::move(run);
          to_clean_.push(std::move(w));
          continue;
        }
        check_outputs(run);
        const Log log(run.verbosity, false, o.name + ": ");
        w->obs = load_observation(run, log);
        o.read_seconds = w->obs->report.seconds.read;
        o.width = w->obs->dirty.width;
        o.height = w->obs->dirty.height;
      } catch (...) {
        fail(*w, std::current_exception());
        to_write_.push(std::move(w));
        continue;
      }
      to_clean_.push(std::move(w));
    }
  }

  void clean_loop(int gpu) {
    // One deconvolver per (algorithm, device) for the worker's life: plans and memory are reused.
    std::map<std::pair<clean::Algorithm, clean::Device>, clean::DeconvolverPool> deconvolvers;
    std::string setup_error;
    if (gpu >= 0) {
      try {
        cuda::set_device(gpu);
      } catch (const std::exception& e) {
        setup_error = e.what();
      }
    }
    while (auto item = to_clean_.pop()) {
      Work& w = **item;
      const auto t0 = Clock::now();
      try {
        if (!setup_error.empty()) throw RuntimeFailure(setup_error);
        if (w.cube) {
          run_cube_job(w, gpu);
          clean_busy_ += seconds_between(t0, Clock::now());
          to_write_.push(std::move(*item));
          continue;
        }
        LoadedObservation& obs = *w.obs;
        const clean::CleanSettings& s = obs.options.settings;
        const Log log(obs.options.verbosity, false, w.outcome.name + ": ");
        if (gpu < 0 && s.device == clean::Device::kGpu)
          throw RuntimeFailure("--device gpu, but this batch runs on the CPU (" + cuda::describe_device() +
                               "); use --device auto or cpu.");
        const bool on_gpu = gpu >= 0 && s.device != clean::Device::kCpu;
        const clean::RunPlan plan = plan_observation(obs, on_gpu ? clean::Device::kGpu : clean::Device::kCpu, log);
        const clean::Device device = plan.device;
        w.result = clean_observation(obs, plan, deconvolvers[{s.algorithm, device}], log);
        w.outcome.device = device == clean::Device::kGpu ? "gpu " + std::to_string(gpu) : "cpu";
        w.outcome.clean_seconds = obs.report.seconds.clean;
        const clean::StageSeconds& st = w.result->diagnostics.seconds;
        w.outcome.setup_seconds = st.setup;
        w.outcome.select_seconds = st.select;
        w.outcome.minor_seconds = st.minor;
        w.outcome.convolve_seconds = st.convolve;
        w.outcome.download_seconds = st.download;
        w.outcome.restore_seconds = obs.report.seconds.restore;
      } catch (...) {
        fail(w, std::current_exception());
      }
      clean_busy_ += seconds_between(t0, Clock::now());
      to_write_.push(std::move(*item));
    }
  }

  // A channel set on this worker's GPU (or the CPU): the whole cube command, outputs included.
  static void run_cube_job(Work& w, int gpu) {
    RunOptions run = *w.cube;
    if (gpu < 0 && run.settings.device != clean::Device::kGpu) run.settings.device = clean::Device::kCpu;
    if (gpu >= 0) run.cube.gpus = {gpu};  // the batch spreads its sets over the GPUs, each set on its worker's
    const nlohmann::json summary = run_cube(run);
    ObservationOutcome& o = w.outcome;
    o.status = OutcomeStatus::kDone;
    o.device = gpu >= 0 && summary.value("device", "") == "gpu" ? "gpu " + std::to_string(gpu) : "cpu";
    record_cube_summary(o, summary);
  }

  void write_loop() {
    while (auto item = to_write_.pop()) {
      Work& w = **item;
      ObservationOutcome& o = w.outcome;
      if (w.result) {
        try {
          const Log log(w.obs->options.verbosity, false, o.name + ": ");
          write_observation(*w.obs, *w.result, log);
          const RunReport& r = w.obs->report;
          o.status = OutcomeStatus::kDone;
          o.write_seconds = r.seconds.write;
          o.iterations = w.result->stop.iterations;
          o.major_cycles = w.result->stop.major_cycles;
          o.stop_reason = std::string(clean::to_string(w.result->stop.reason));
          o.rms_residual = r.rms_residual;
          o.model_flux = r.model_flux;
          o.peak_residual = w.result->stop.peak_residual;
          o.summary = make_summary_json(r, *w.result, w.obs->options);
        } catch (...) {
          fail(w, std::current_exception());
        }
      }
      o.seconds = seconds_between(w.started, Clock::now());
      ObservationOutcome finished = std::move(o);
      item->reset();  // the images go before the next observation is taken
      progress_.record(finished);
      std::lock_guard<std::mutex> lock(outcomes_mutex_);
      outcomes_.push_back(std::move(finished));
    }
  }

  const BatchOptions& options_;
  std::vector<const BatchJob*> jobs_;
  std::vector<int> gpus_;
  Progress& progress_;
  std::size_t workers_;
  int io_threads_;
  BoundedQueue<WorkPtr> to_clean_, to_write_;
  std::atomic<std::size_t> next_{0};
  std::atomic<double> clean_busy_{0.0};
  std::mutex outcomes_mutex_;
  std::vector<ObservationOutcome> outcomes_;
};

// The automatic --streams-per-gpu: the first observation that reads sets the size (a batch is
// usually of one size; a larger one later still gets the memory check of its own run).
int choose_streams(const std::vector<int>& gpus, const std::vector<const BatchJob*>& jobs, const Log& log) {
#ifdef GPUCLEAN_HAVE_CUDA
  constexpr int kTries = 3;
  int tries = 0;
  for (const BatchJob* job : jobs) {
    if (!job->error.empty() || job->options.cube.wsclean_channels) continue;
    if (tries++ == kTries) break;
    try {
      const io::FitsImage dirty = io::read_fits_shape(job->options.dirty);  // sizes only, no pixels
      const io::FitsImage psf = io::read_fits_shape(job->options.psf);
      // No beam: it is fitted to the PSF's pixels, not read here.
      const clean::RunShape shape{.width = dirty.width, .height = dirty.height, .psf_width = psf.width,
                                  .psf_height = psf.height};
      const std::size_t per_stream = clean::gpu_bytes_per_worker(shape, job->options.settings);
      int streams = kMaxAutomaticStreams;
      const unsigned cores_per_gpu = std::thread::hardware_concurrency() / static_cast<unsigned>(std::max<std::size_t>(1, gpus.size()));
      for (int g : gpus) {
        cuda::set_device(g);
        std::string why;
        const int n = automatic_streams(cuda::device_memory().free_bytes, per_stream, cuda::multiprocessor_count(),
                                        cores_per_gpu, &why);
        log.verbose("streams per GPU on gpu %d for %zux%zu observations: %d (%s)", g, dirty.width, dirty.height, n,
                    why.c_str());
        streams = std::min(streams, n);
      }
      return streams;
    } catch (const std::exception& e) {
      log.verbose("streams per GPU: '%s' does not tell the size (%s)", job->options.dirty.c_str(), e.what());
    }
  }
  log.verbose("streams per GPU: 1 (no observation told the image size)");
#else
  (void)gpus, (void)jobs, (void)log;
#endif
  return 1;
}

std::string default_report_path(const BatchOptions& o, const Shard& shard) {
  fs::path dir = fs::is_directory(o.manifest) ? fs::path(o.manifest) : fs::path(o.manifest).parent_path();
  if (!o.out_dir.empty()) dir = o.out_dir;
  std::string name = "gpuclean-batch";
  if (shard.count > 1) name += "-shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count);
  return (dir / (name + ".json")).string();
}

}  // namespace

int run_batch(const BatchOptions& options) {
  const auto t_start = Clock::now();
  clean::validate(options.defaults.settings);
  check_cube_options(options);
  if (!options.out_dir.empty()) {
    if (!fs::is_directory(options.manifest))
      throw clean::InvalidSettings("--out-dir applies to a folder of WSClean images; a manifest names its outputs.");
    fs::create_directories(options.out_dir);
  }
  const std::vector<BatchJob> all = load_jobs(options);
  const Shard shard = resolve_shard(options.shard, process_environment());
  std::vector<const BatchJob*> mine;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (in_shard(i, shard)) mine.push_back(&all[i]);

  // Workers: one per GPU this process may use; one CPU worker without any.
  std::vector<int> gpus;
  const clean::Device wanted = options.defaults.settings.device;
  if (wanted != clean::Device::kCpu && cuda::built_with_cuda() && cuda::has_usable_device())
    gpus = devices_for(cuda::device_count(), local_rank(process_environment()), options.max_gpus);
  if (gpus.empty() && wanted == clean::Device::kGpu)
    throw RuntimeFailure("--device gpu, but " + cuda::describe_device() + "; use --device cpu (or auto).");
  if (gpus.empty() && options.defaults.settings.compare_select)
    throw clean::InvalidSettings("--compare-select compares the GPU selection backends inside GPU Clark, but this "
                                 "batch runs on the CPU (" + cuda::describe_device() + ").");
  const Verbosity v = options.defaults.verbosity;
  const Log log(v, false);
  // Clean workers: streams_per_gpu per GPU, spread so that the first observations go to every
  // GPU; one CPU worker without any.
  int streams_per_gpu = 1;
  if (!gpus.empty())
    streams_per_gpu = options.streams_per_gpu > 0 ? options.streams_per_gpu : choose_streams(gpus, mine, log);
  std::vector<int> worker_gpus;
  for (int s = 0; s < streams_per_gpu; ++s) worker_gpus.insert(worker_gpus.end(), gpus.begin(), gpus.end());
  std::vector<std::string> devices;
  for (int g : worker_gpus) devices.push_back("gpu " + std::to_string(g));
  if (devices.empty()) devices.push_back("cpu");
  const int io_threads = options.io_threads > 0 ? options.io_threads
                                                : automatic_io_threads(devices.size(), std::thread::hardware_concurrency());
  log.verbose("%d reader thread%s and %d writer thread%s", io_threads, io_threads == 1 ? "" : "s", io_threads,
              io_threads == 1 ? "" : "s");

  const std::string report_path = options.report.empty() ? default_report_path(options, shard) : options.report;
  for (const auto& j : all) {
    if (report_path == j.options.dirty || report_path == j.options.psf)
      throw clean::InvalidSettings("--report '" + report_path + "' names an input; choose another name.");
  }
  if (v != Verbosity::kQuiet) {
    std::printf("gpuclean batch: %zu of %zu observations%s, %zu worker%s (%s)\n", mine.size(), all.size(),
                shard.count > 1 ? (" (shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) +
                                   " from " + shard.source + ")").c_str()
                                : "",
                devices.size(), devices.size() == 1 ? "" : "s", [&] {
                  if (gpus.empty()) return std::string("cpu");
                  std::string s;
                  for (int g : gpus) s += (s.empty() ? "gpu " : ", gpu ") + std::to_string(g);
                  if (streams_per_gpu > 1) s += ", " + std::to_string(streams_per_gpu) + " streams each";
                  return s;
                }().c_str());
    std::fflush(stdout);
  }
  const bool bar = ::isatty(fileno(stderr)) && ::isatty(fileno(stdout));
  Progress progress(mine.size(), bar, v, bar ? stderr : stdout);
  Pipeline pipeline(options, mine, worker_gpus, io_threads, progress);
  const std::vector<ObservationOutcome> outcomes = pipeline.run();
  progress.finish();

  const double wall = seconds_between(t_start, Clock::now());
  BatchTotals totals = summarize(outcomes, wall, pipeline.clean_stage_seconds(), devices);
  totals.streams_per_gpu = gpus.empty() ? 0 : static_cast<std::size_t>(streams_per_gpu);
  totals.io_threads = static_cast<std::size_t>(io_threads);
  if (v != Verbosity::kQuiet) print_summary_table(stdout, outcomes, totals, shard);
  io::write_text_file(report_path,
                      batch_report_json(outcomes, totals, shard, options.manifest, options.command_line).dump(2) + "\n",
                      true);
  if (v != Verbosity::kQuiet) std::printf("report: %s\n", report_path.c_str());
  if (totals.failed > 0) {
    std::fprintf(stderr, "gpuclean: error: %zu of %zu observations failed (reasons above and in %s); fix them and "
                 "rerun with --resume to do only those.\n", totals.failed, outcomes.size(), report_path.c_str());
    return to_int(ExitCode::kBatchFailures);
  }
  return 0;
}

}  // namespace gpuclean::app

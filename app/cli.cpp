#include "app/cli.hpp"

#include "app/batch/streams.hpp"
#include "app/enum_option.hpp"
#include "app/options/option_row.hpp"
#include "app/version.hpp"
#include "data/arrays.hpp"
#include "select/backend_names.hpp"
#include "select/select_types.hpp"

namespace gpuclean::app {

void add_observation_options(CLI::App& app, RunOptions& r) {
  add_option_rows(app, r, OptionSection::kObservation);
  // WSClean's rule: --threshold alone turns the 3-sigma auto-threshold off. A batch row starts
  // from the batch's options, so "given" carries over from them.
  app.final_callback([&app, &r] {
    r.auto_threshold_given = r.auto_threshold_given || app.count("--auto-threshold") > 0;
    clean::apply_explicit_threshold(r.settings, app.count("--threshold") > 0, r.auto_threshold_given);
  });
}

void add_cube_options(CLI::App& app, RunOptions& r) { add_option_rows(app, r, OptionSection::kCube); }

void add_output_file_options(CLI::App& app, RunOptions& r) { add_option_rows(app, r, OptionSection::kOutputFile); }

namespace {

void add_simulate_options(CLI::App& sub, SimulateOptions& o) {
  auto& s = o.settings;
  sub.add_option("--size", s.size, "Image size N (N x N pixels)")->required()->check(CLI::Range(16, 1 << 16));
  sub.add_option("--out", o.out_dir, "Folder for dirty.fits, psf.fits, truth.fits and sources.csv")->required();
  sub.add_option("--sources", s.sources, "Number of point sources")->capture_default_str();
  sub.add_option("--gaussians", s.gaussians, "Number of Gaussian sources")->capture_default_str();
  auto* gsize = sub.add_option_function<std::vector<double>>(
      "--gaussian-size", [&s](const std::vector<double>& v) { s.gaussian_min_beams = v[0], s.gaussian_max_beams = v[1]; },
      "Range of the Gaussians' major FWHM, in beams (default 1.5 4)");
  gsize->expected(2)->type_name("MIN MAX");
  auto* gflux = sub.add_option_function<std::vector<double>>(
      "--gaussian-flux", [&s](const std::vector<double>& v) { s.gaussian_min_flux = v[0], s.gaussian_max_flux = v[1]; },
      "Range of the Gaussians' integrated flux in Jy, drawn log-uniform (default: 5 x a point source's flux)");
  gflux->expected(2)->type_name("MIN MAX");
  sub.add_option("--seed", s.seed, "Random seed")->capture_default_str();
  sub.add_option("--array", s.array, "Antenna layout")->check(CLI::IsMember(data::array_names()))->capture_default_str();
  sub.add_option("--noise", s.noise, "Thermal noise, image-plane RMS [Jy/beam]")->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub.add_option("--freq", s.freq_hz, "Observing frequency [Hz]")->check(CLI::PositiveNumber)->capture_default_str();
  sub.add_option("--dec", s.dec_deg, "Declination of the field [deg] (default: one that suits the array)")
      ->check(CLI::Range(-90.0, 90.0));
  sub.add_option("--ha-hours", s.ha_hours, "Track from -H to +H hours of hour angle")->check(CLI::Range(0.01, 12.0))
      ->capture_default_str();
  sub.add_option("--pixel-scale", s.pixel_arcsec, "Pixel size [arcsec] (default: 4 pixels across the beam)")
      ->check(CLI::NonNegativeNumber);
  sub.add_option_function<std::vector<std::string>>(
         "--weighting", [&s](const std::vector<std::string>& v) { s.weighting = data::parse_weighting(v); },
         "Visibility weighting, as WSClean's: natural, uniform, or briggs R (robustness R; -2 about uniform, 2 "
         "about natural)")
      ->expected(1, 2)->type_name("MODE [R]")->default_str("briggs 0");
  sub.add_flag("--overwrite", o.overwrite, "Replace existing files");

  const std::string band = "Channels (wideband)";
  auto* channels = sub.add_option("--channels", o.channels.channels,
                                  "Channels across the band; above 1 writes NAME-0000-dirty.fits, ... NAME-MFS-*.fits, "
                                  "truth-0000.fits, ... as WSClean names them, instead of dirty.fits and psf.fits")
                       ->check(CLI::Range(1, 1024))->capture_default_str()->group(band);
  sub.add_option("--bandwidth", o.channels.bandwidth_hz, "Total band [Hz], centred on --freq (needed with --channels)")
      ->check(CLI::PositiveNumber)->needs(channels)->group(band);
  auto* alpha = sub.add_option_function<std::vector<double>>(
      "--spectral-index",
      [&o](const std::vector<double>& v) { o.channels.spectral_index_min = v[0], o.channels.spectral_index_max = v[1]; },
      "Each source's spectral index alpha, uniform in [MIN, MAX]: S(nu) = S(--freq) (nu / --freq)^alpha "
      "(default -0.7 -0.7)");
  alpha->expected(2)->type_name("MIN MAX")->needs(channels)->group(band);
  sub.add_option("--name", o.name, "File-name prefix of the channel images")->needs(channels)->capture_default_str()
      ->group(band);
  sub.add_option("--threads", o.channels.threads,
                 "Host threads: channels simulated and files written in parallel (0: every core; the images do not "
                 "depend on it)")
      ->check(CLI::Range(0, 4096))->capture_default_str()->group(band);
}

void add_bench_clean_options(CLI::App& sub, BenchCleanOptions& o) {
  sub.add_option("--sizes", o.sizes, "image sizes N (N x N)")->delimiter(',')->capture_default_str();
  sub.add_option("--niters", o.niters, "component limits")->delimiter(',')->capture_default_str();
  sub.add_option("--paths", o.paths, "gpu-clark, gpu-hogbom, cpu-clark, gpu-multiscale, cpu-multiscale")
      ->delimiter(',')
      ->check(CLI::IsMember({"gpu-clark", "gpu-hogbom", "cpu-clark", "gpu-multiscale", "cpu-multiscale"}))
      ->capture_default_str();
  sub.add_option("--cpu-max-size", o.cpu_max_size, "leave the CPU path out above this size")->capture_default_str();
  sub.add_option("--hogbom-max-size", o.hogbom_max_size, "leave GPU Hogbom out above this size")->capture_default_str();
  sub.add_option("--threshold", o.threshold, "fixed stopping threshold [Jy/beam]")->capture_default_str();
  sub.add_option("--sources", o.sources, "point sources per simulated field")->capture_default_str();
  sub.add_option("--gaussians", o.gaussians, "extended (Gaussian) sources per field (0: sources / 100)")
      ->capture_default_str();
  sub.add_option("--max-scales", o.max_scales, "multiscale paths: automatic scales, 0 included")
      ->check(CLI::Range(1, 16))->capture_default_str();
  sub.add_flag("--local-rms", o.local_rms, "Clark and multiscale paths: --local-rms");
  sub.add_option("--local-rms-window", o.local_rms_window, "with --local-rms: its window in beams")
      ->check(CLI::PositiveNumber)->capture_default_str();
  add_enum_option(sub, "--local-rms-method", o.local_rms_method, clean::kLocalRmsMethodNames,
                  "with --local-rms: rms or mad");
  sub.add_option("--cli-size", o.cli_size, "size of the whole-command-line run (0: skip)")->capture_default_str();
  sub.add_option("--channels", o.channels,
                 "bench a simulated cube of this many channels instead: joined (GPU and CPU), then every plane on "
                 "its own (--independent-channels); --sizes and --niters apply")->capture_default_str();
  sub.add_option("--independent-channels", o.independent_channels,
                 "--channels: channels of the independent-planes run (0: skip it)")->capture_default_str();
  sub.add_option("--cpu-planes", o.cpu_planes, "--channels: planes the CPU path cleans for its channels/s")
      ->capture_default_str();
  sub.add_option("--parallel-planes", o.parallel_planes, "--channels: GPU workers of the independent run (0: auto)")
      ->capture_default_str();
  sub.add_option("--format", o.format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  sub.add_option("--output", o.output, "write csv/json here (the table still goes to stdout)");
}

void add_bench_batch_options(CLI::App& sub, BenchBatchOptions& o) {
  sub.add_option("--size", o.size, "image size N (N x N)")->capture_default_str();
  sub.add_option("--counts", o.counts, "batch lengths")->delimiter(',')->capture_default_str();
  sub.add_option("--distinct", o.distinct, "simulated fields, reused round-robin")->check(CLI::Range(1, 4096))
      ->capture_default_str();
  sub.add_option("--sources", o.sources, "point sources per field")->capture_default_str();
  sub.add_option("--dir", o.dir, "scratch folder, kept (default: a temporary one, removed)");
  sub.add_option("--batch-args", o.batch_args, "extra options for the batch runs, e.g. --batch-args=--io-threads=2")
      ->allow_extra_args(false);
  sub.add_option("--target", o.target, "observations/s the batch should reach (unless the disk's rate is lower)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub.add_option("--streams", o.sweep_streams,
                 "also run the clean stage in memory on this many workers at once, and the first length with "
                 "this many streams per GPU (with every --io value)")
      ->delimiter(',')->check(CLI::Range(1, 64));
  sub.add_option("--io", o.sweep_io, "also run the first length with each of these I/O thread counts")
      ->delimiter(',')->check(CLI::Range(1, 64));
  sub.add_option("--gpus", o.sweep_gpus,
                 "also run every length on this many GPUs each (--max-gpus; counts above the visible GPUs are left "
                 "out), with the automatic streams and I/O threads")
      ->delimiter(',')->check(CLI::Range(1, 64));
}

void add_bench_select_options(CLI::App& sub, BenchSelectOptions& o) {
  sub.add_option("--sizes", o.log2_sizes, "log2 of the input sizes")->delimiter(',')->check(CLI::Range(0, 31))
      ->capture_default_str();
  sub.add_option("--distributions", o.distributions, "value distributions (default: all)")->delimiter(',');
  sub.add_option("--backends", o.backends, "backends to time (default: every exact GPU backend; sort is always in)")
      ->delimiter(',');
  sub.add_option("--ks", o.ks, "k values (numbers or n/100)")->delimiter(',')
      ->check(CLI::IsMember({"n/100"}) | CLI::NonNegativeNumber)->capture_default_str();
  sub.add_option("--repeats", o.repeats, "timed runs per case (median reported)")->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub.add_option("--format", o.format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  sub.add_option("--output", o.output, "write csv/json here (the table still goes to stdout)");
  sub.add_flag("!--no-order-statistics", o.order_statistics, "skip the median and the 101 percentiles");
  sub.add_flag("!--no-cpu-check", o.check_cpu, "check against the sort backend only, not the CPU reference");
  sub.add_flag("!--no-robust", o.robust, "skip robust_statistics (median and MAD of the finite values)");
  sub.add_flag("--auto-table", o.auto_table,
               "also print, per size, operation, k and data class, the fastest backend and the auto backend's time "
               "and choice (the data behind select/backends/auto_rule.hpp)");
  // A k above a size's n cannot be met (select::check_top_k): refused before any work, not once
  // the smaller sizes have run.
  sub.final_callback([&o] {
    for (const std::string& k : o.ks) {
      if (k == "n/100") continue;
      for (int lg : o.log2_sizes) {
        const std::size_t n = std::size_t{1} << lg;
        if (std::stod(k) > static_cast<double>(n))
          throw select::InvalidRequest("--ks " + k + " is more than the " + std::to_string(n) + " elements of --sizes " +
                                       std::to_string(lg) + " (2^" + std::to_string(lg) +
                                       "); give k <= 2^size for every size, or n/100.");
      }
    }
  });
}

void add_bench_gridder_options(CLI::App& sub, BenchGridderOptions& o) {
  sub.add_option("--case", o.cases, "A (2048² at 1.6\", 4 channels, 241,920 rows), B (8192² at 1.5\", 8 channels, "
                 "60,480 rows), C (as B, 999,936 rows) or all (docs/design/imaging-plan.md §7)")
      ->check(CLI::IsMember({"A", "B", "C", "all"}))->capture_default_str();
  sub.add_option("--size", o.size, "image size N (N x N) instead of the case's")->check(CLI::Range(16, 1 << 16));
  sub.add_option("--scale", o.scale_arcsec, "pixel size [arcsec] instead of the case's")->check(CLI::PositiveNumber);
  sub.add_option("--channels", o.channels, "output channels instead of the case's")->check(CLI::Range(1, 1024));
  sub.add_option("--rows", o.rows, "rows instead of the case's (whole integrations of 2,016 baselines)")
      ->check(CLI::Range(1, 1 << 30));
  sub.add_option("--hours", o.hours, "track length [h] centred on transit instead of the case's (A 4, B and C 8)")
      ->check(CLI::Range(0.001, 24.0));
  sub.add_option("--dec", o.dec_deg, "declination of the field [deg]")->check(CLI::Range(-90.0, 90.0))
      ->capture_default_str();
  sub.add_option("--repeat", o.repeat, "GPU: timed calls after one warm-up (the median is shown)")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  auto* cpu = sub.add_flag("--cpu", o.cpu, "also time invert_cpu and predict_cpu on all cores and check the GPU against "
                           "them (the default for case A; B and C take minutes); without a GPU, the CPU alone");
  sub.add_flag("--no-cpu", o.no_cpu, "leave the CPU reference out, also for case A")->excludes(cpu);
  sub.add_option("--cpu-repeat", o.cpu_repeat, "CPU: timed calls (the median is shown)")->check(CLI::Range(1, 100))
      ->capture_default_str();
  sub.add_option("--epsilon", o.epsilon, "requested accuracy of the gridder (chooses kernel and planes)")
      ->check(CLI::Range(1e-7, 0.1))->capture_default_str();
  sub.add_option("--gpu", o.gpu, "CUDA device")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub.add_option("--seed", o.seed, "seed of the flags, visibilities and model")->capture_default_str();
}

void add_quicklook_options(CLI::App& sub, QuicklookPanelsOptions& o) {
  sub.add_option("images", o.inputs, "FITS images of one size, shown left to right")->required();
  sub.add_option("-o,--output", o.output, "PNG to write")->required();
  auto* percentiles = sub.add_option_function<std::vector<double>>(
      "--percentiles", [&o](const std::vector<double>& v) { o.low_percent = v[0], o.high_percent = v[1]; },
      "Percentiles of the first image's finite pixels shown black and white in every panel (default 0.5 99.5)");
  percentiles->expected(2)->type_name("LO HI");
  auto* range = sub.add_option_function<std::vector<double>>(
      "--range", [&o](const std::vector<double>& v) { o.range = std::make_pair(v[0], v[1]); },
      "Image values shown black and white in every panel, instead of percentiles");
  range->expected(2)->type_name("MIN MAX")->excludes(percentiles);
  sub.add_option("--titles", o.titles, "One title per image, separated by commas, drawn above the panels")
      ->delimiter(',');
  sub.add_flag("--overwrite", o.overwrite, "Replace an existing PNG (never an input)");
}

void add_batch_options(CLI::App& sub, BatchOptions& o) {
  sub.add_option("manifest", o.manifest,
                 "CSV/TSV with columns dirty, psf, out (and any option of the single command), or a folder of "
                 "WSClean-named NAME-dirty.fits / NAME-psf.fits pairs")->required();
  const std::string b = "Batch";
  sub.add_option("--out-dir", o.out_dir, "Folder mode: write NAME-image/model/residual.fits here (default: beside the inputs)")
      ->group(b);
  sub.add_flag("--resume", o.resume, "Skip observations whose outputs all exist and are complete; redo the rest")
      ->group(b);
  sub.add_option("--shard", o.shard,
                 "Take observations I, I+N, I+2N, ... (0 <= I < N); without it, Slurm job arrays and MPI launchers "
                 "set I and N")->type_name("I/N")->group(b);
  sub.add_option("--report", o.report, "JSON report, one entry per observation (default: gpuclean-batch[-shard-I-of-N].json "
                 "in the output folder)")->group(b);
  sub.add_option("--io-threads", o.io_threads,
                 "Reader threads and writer threads around the clean workers (0: one each per worker, at most half the "
                 "cores)")
      ->check(CLI::Range(0, 64))->capture_default_str()->group(b);
  sub.add_option("--max-gpus", o.max_gpus, "Use at most this many of the visible GPUs (0: all)")
      ->capture_default_str()->group(b);
  sub.add_option("--streams-per-gpu", o.streams_per_gpu,
                 "Observations cleaned at once on each GPU, each on its own stream (0: from the GPU's free memory, "
                 "SM count and the host's cores, at most " + std::to_string(kMaxAutomaticStreams) + ")")
      ->check(CLI::Range(0, kMaxStreamsPerGpu))->capture_default_str()->group(b);
  sub.add_option("--queue", o.queue_depth, "Observations waiting between stages, per GPU worker (bounds host memory)")
      ->check(CLI::Range(1, 64))->capture_default_str()->group(b);
  sub.add_flag("--quicklook", o.quicklook, "Write a PNG preview beside each restored image (NAME-image.png)")
      ->group("Outputs");
  add_observation_options(sub, o.defaults);
  // A folder's channel sets take the single command's cube options; the batch's workers are the
  // parallelism, so each set's planes go one at a time unless --parallel-planes says otherwise.
  o.defaults.cube.parallel_planes = 1;
  add_cube_options(sub, o.defaults);
  sub.add_flag("--save-source-list", o.save_source_list,
               "--join-channels: write each channel set's components as a WSClean source list, NAME-sources.txt "
               "beside its images")->group("Cubes and channels");
}

}  // namespace

void refuse_negative_counts(CLI::App& app) {
  // CLI11 reads an unsigned option with strtoull, which takes "-1" as 2^64 - 1: a typo would
  // become "no limit". CLI11 names every unsigned type UINT, so each such option, here and in
  // every subcommand, refuses a sign before conversion.
  const CLI::Validator unsigned_count(
      [](std::string& value) -> std::string {
        const auto first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-')
          return "'" + value + "' is negative; give a count of 0 or more";
        return {};
      },
      "", "NonNegativeCount");
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_name() == "UINT") opt->check(unsigned_count);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_negative_counts(*sub);
}

std::unique_ptr<Cli> make_cli() {
  auto cli = std::make_unique<Cli>();
  cli->app = std::make_unique<CLI::App>(
      "gpuclean: Clark and Högbom CLEAN deconvolution of radio images.\n"
      "  gpuclean DIRTY PSF -o RESTORED [options]      (2-D images or FREQ/STOKES cubes)\n"
      "  gpuclean NAME --wsclean-channels -o OUT [options]\n"
      "  gpuclean batch MANIFEST|FOLDER [options]\n"
      "  gpuclean simulate --size N --out DIR [options]\n"
      "  gpuclean quicklook A.fits B.fits ... -o PANELS.png [options]",
      "gpuclean");
  cli->app->set_version_flag("--version", std::string("gpuclean ") + kVersion);
  cli->app->require_subcommand(0, 1);
  cli->app->add_option("dirty", cli->run.dirty, "Dirty image (FITS)");
  cli->app->add_option("psf", cli->run.psf,
                       "Point-spread function (FITS), normally the dirty image's size with its peak at N/2");
  add_option_rows(*cli->app, cli->run, OptionSection::kOutput);
  add_observation_options(*cli->app, cli->run);
  add_output_file_options(*cli->app, cli->run);
  add_option_rows(*cli->app, cli->run, OptionSection::kCubeInput);
  add_cube_options(*cli->app, cli->run);
  cli->batch = cli->app->add_subcommand("batch", "Deconvolve every observation of a manifest or folder");
  add_batch_options(*cli->batch, cli->batch_options);
  cli->simulate = cli->app->add_subcommand("simulate", "Simulate an interferometric observation (dirty image, PSF, truth)");
  add_simulate_options(*cli->simulate, cli->sim);
  cli->bench = cli->app->add_subcommand("bench", "Benchmarks that print a table");
  cli->bench->require_subcommand(1);
  cli->bench_select = cli->bench->add_subcommand("select", "Time the selection backends against CUB radix sort");
  add_bench_select_options(*cli->bench_select, cli->bench_select_options);
  cli->bench_batch = cli->bench->add_subcommand("batch", "Batch throughput against the clean stage alone, and host memory");
  add_bench_batch_options(*cli->bench_batch, cli->bench_batch_options);
  cli->bench_clean = cli->bench->add_subcommand("clean", "Time GPU Clark, GPU Hogbom and the CPU path on simulated fields");
  add_bench_clean_options(*cli->bench_clean, cli->bench_clean_options);
  cli->bench_gridder = cli->bench->add_subcommand(
      "gridder", "Time the GPU gridder and degridder (and the CPU reference) on synthetic MeerKAT uvw");
  add_bench_gridder_options(*cli->bench_gridder, cli->bench_gridder_options);
  cli->bench_io = cli->bench->add_subcommand("io", "Read and write a channel set of FITS planes, against the page cache");
  add_bench_io_options(*cli->bench_io, cli->bench_io_options);
  cli->quicklook = cli->app->add_subcommand(
      "quicklook", "FITS images side by side in one PNG, under one linear stretch (north up, NaN transparent)");
  add_quicklook_options(*cli->quicklook, cli->quicklook_options);
  refuse_negative_counts(*cli->app);
  return cli;
}

}  // namespace gpuclean::app

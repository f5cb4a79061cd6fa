// gpuclean entry point: parse, validate, run; every failure becomes one line on stderr and a
// documented exit code (app/exit_codes.hpp).

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <new>
#include <string>
#include <vector>

#include "app/bench/bench_cube.hpp"
#include "app/cli.hpp"
#include "app/cube/cube_input.hpp"
#include "app/cube/cube_run.hpp"
#include "app/exit_codes.hpp"
#include "app/failure.hpp"
#include "app/image/image_command.hpp"
#include "app/stop_signals.hpp"

namespace {

using gpuclean::app::ExitCode;

// Images are large (a 16384^2 image is 1 GiB) and each run allocates, fills and frees several;
// with 4 KiB pages every first touch is a page fault, about a quarter of a second per GiB, which
// measured as the largest part of a 16384^2 run's set-up and downloads. glibc's malloc asks the
// kernel for transparent huge pages when its hugetlb tunable is set, and tunables are read only
// at start-up: so the program starts itself once more with it set (GPUCLEAN_NO_HUGE_PAGES=1, or
// the tunable already given, skips this). If the exec fails, the run goes on as it is.
void use_huge_pages(char** argv) {
  const char* given = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = given ? given : "";
  if (std::getenv("GPUCLEAN_NO_HUGE_PAGES") || tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;
  const std::string wanted = (tunables.empty() ? "" : tunables + ":") + "glibc.malloc.hugetlb=1";
  if (::setenv("GLIBC_TUNABLES", wanted.c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
}

int fail(ExitCode code, const std::string& message) {
  std::string one_line = message;
  for (char& c : one_line) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "gpuclean: error: %s\n", one_line.c_str());
  return gpuclean::app::to_int(code);
}

std::string joined(int argc, char** argv) {
  std::string s = "gpuclean";
  for (int i = 1; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

int run_simulate(const gpuclean::app::SimulateOptions& o, const std::string& command) {
  namespace gd = gpuclean::data;
  gd::validate(o.settings);  // every setting and output before any work
  gd::validate(o.channels, o.settings);
  std::size_t dropped = 0;
  if (o.channels.channels > 1) {
    gd::check_channel_outputs(o.out_dir, o.name, o.channels.channels, o.overwrite);
    const auto sim = gd::simulate_channels(o.settings, o.channels);
    gd::write_channel_simulation(sim, o.settings, o.channels, o.out_dir, o.name, o.overwrite, command);
    const auto& first = sim.channels.front();
    const std::size_t last = sim.channels.size() - 1;
    std::printf("simulated %s %zux%zu: %zu channels over %.6g-%.6g MHz, %zu sources, pixel %.3f\" -> %s: "
                "%s-0000..%04zu-dirty/psf.fits, %s-MFS-dirty/psf.fits, truth-0000..%04zu.fits, sources.csv\n",
                first.telescope.c_str(), first.size, first.size, sim.channels.size(),
                (sim.frequencies_hz.front() - 0.5 * sim.widths_hz.front()) / 1e6,
                (sim.frequencies_hz.back() + 0.5 * sim.widths_hz.back()) / 1e6, first.sources.size(),
                first.pixel_deg * 3600.0, o.out_dir.c_str(), o.name.c_str(), last, o.name.c_str(), last);
    dropped = sim.channels.back().uv_dropped;  // the top channel reaches furthest in uv
  } else {
    gd::check_simulation_outputs(o.out_dir, o.overwrite);
    const auto sim = gd::simulate(o.settings);
    gd::write_simulation(sim, o.settings, o.out_dir, o.overwrite, command);
    std::printf("simulated %s %zux%zu: %zu sources, pixel %.3f\", beam %.2f pixels, %zu uv samples -> %s\n",
                sim.telescope.c_str(), sim.size, sim.size, sim.sources.size(), sim.pixel_deg * 3600.0,
                sim.beam_fwhm_px, sim.uv_samples, o.out_dir.c_str());
    dropped = sim.uv_dropped;
  }
  if (dropped > 0) {
    std::fprintf(stderr, "gpuclean: note: %zu uv samples lie beyond the grid at this pixel size and were left out (a uv-range cut); a smaller --pixel-scale keeps them\n",
                 dropped);
  }
  return 0;
}

int run(int argc, char** argv) {
  // WSClean's single-dash options (-size 512 512, -weight briggs 0) are not CLI11's: parsed apart.
  if (argc > 1 && std::string(argv[1]) == "image")
    return gpuclean::app::run_image(std::vector<std::string>(argv + 2, argv + argc), joined(argc, argv));
  auto cli = gpuclean::app::make_cli();
  try {
    cli->app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli->app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli->app->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli->app->exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(ExitCode::kUsage, std::string(e.what()) + ". Run 'gpuclean --help' for the options.");
  }

  const std::string command = joined(argc, argv);
  if (*cli->simulate) return run_simulate(cli->sim, command);
  if (*cli->batch) {
    cli->batch_options.command_line = command;
    return gpuclean::app::run_batch(cli->batch_options);
  }
  if (*cli->quicklook) return gpuclean::app::run_quicklook_panels(cli->quicklook_options, command);
  if (*cli->bench_select) return gpuclean::app::run_bench_select(cli->bench_select_options) == 0 ? 0 : 4;
  if (*cli->bench_gridder) return gpuclean::app::run_bench_gridder(cli->bench_gridder_options);
  if (*cli->bench_io) return gpuclean::app::run_bench_io(cli->bench_io_options);
  if (*cli->bench_batch) return gpuclean::app::run_bench_batch(cli->bench_batch_options);
  if (*cli->bench_clean)
    return cli->bench_clean_options.channels > 0 ? gpuclean::app::run_bench_cube(cli->bench_clean_options)
                                                 : gpuclean::app::run_bench_clean(cli->bench_clean_options);
  auto& r = cli->run;
  r.command_line = command;
  if (gpuclean::app::is_cube_run(r)) {
    if (r.output.empty()) return fail(ExitCode::kUsage, "give the restored cube's name (or WSClean's output NAME) with -o");
    gpuclean::app::run_cube(r);
    return 0;
  }
  if (r.dirty.empty() || r.psf.empty()) {
    return fail(ExitCode::kUsage, "give a dirty image and a PSF: gpuclean DIRTY PSF -o RESTORED");
  }
  if (r.output.empty()) {
    return fail(ExitCode::kUsage, "give the restored image's name with -o RESTORED.fits");
  }
  r.command_line = command;
  gpuclean::app::run_clean(r);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  use_huge_pages(argv);
  gpuclean::app::install_stop_signals();  // before any thread: they all inherit the blocked signals
  int code;
  try {
    code = run(argc, argv);
  } catch (...) {
    const gpuclean::app::Failure f = gpuclean::app::classify(std::current_exception());
    gpuclean::app::finish_if_stopped();  // an error caused by the stop itself is not reported
    code = fail(f.code, f.message);
  }
  gpuclean::app::finish_if_stopped();
  return code;
}

// WSClean's GENERAL OPTIONS: output, logging, resources, re-use, the model column's upkeep and
// MPI placement (W37:main/commandline.cpp).
#include "app/wsclean/wsclean_rows.hpp"

#include "clean/errors.hpp"

namespace gpuclean::app::wsclean_rows {
namespace v = wsclean_value;

void general_rows(std::vector<WscleanOption>& rows) {
  const std::string no_reorder =
      "gpuclean reads each MS once into memory (the GPU's when it fits) and keeps the visibilities for every "
      "major cycle: it writes no reordered files";
  const std::string mpi = "gpuclean image runs as one process, so every output channel is imaged here (the option "
                          "places work over wsclean-mp's MPI ranks)";
  add(rows, "GENERAL OPTIONS",
      {
          yes("version", 0, "", "Print the version and exit.",
              [](ImageOptions& o, const GivenOption&) { o.version = true; }, "gpuclean's version"),
          yes("help", 0, "", "Print the option list and exit.", [](ImageOptions& o, const GivenOption&) { o.help = true; }),
          yes("quiet", 0, "", "Print nothing but errors.",
              [](ImageOptions& o, const GivenOption&) { o.verbosity = Verbosity::kQuiet; }),
          yes("verbose,v", 0, "", "More output.",
              [](ImageOptions& o, const GivenOption&) { o.verbosity = Verbosity::kVerbose; }),
          yes("log-time", 0, "", "Start each line of output with the date and time.",
              [](ImageOptions& o, const GivenOption&) { o.log_time = true; }),
          yes("temp-dir,tempdir", 1, "<directory>", "Where temporary (reordered) files are written.",
              [](ImageOptions& o, const GivenOption& g) {
                if (g.values[0].empty()) throw clean::InvalidSettings(g.option + " must not be empty");
                o.resources.temp_dir = g.values[0];
              },
              "checked to be a writable directory before any work; gpuclean writes no temporary files (it keeps the "
              "visibilities in memory) and stages its outputs beside them"),
          refused("save-weights,saveweights", 0, "", "Save the imaging weight grid as NAME-weights.fits.",
                  "not supported yet: gpuclean does not write its weight grids"),
          refused("save-uv,saveuv", 0, "", "Save the gridded uv plane of the residual (NAME-uv-real/imag.fits).",
                  "gpuclean writes no uv-plane images (its grids are w-stacked and never whole); Fourier-transform "
                  "NAME-residual.fits instead"),
          refused("reuse-psf", 1, "<prefix>", "Read the PSFs from PREFIX[-000c]-psf.fits instead of imaging them.",
                  "not supported yet: gpuclean images the PSF with the dirty image in one pass (it costs little)"),
          refused("reuse-dirty", 1, "<prefix>",
                  "Read the dirty images from PREFIX[-000c]-dirty.fits instead of imaging them.",
                  "not supported yet: gpuclean images the dirty image from the visibilities"),
          yes("dry-run", 0, "", "Parse the command line and stop: no imaging.",
              [](ImageOptions& o, const GivenOption&) { o.dry_run = true; },
              "every check gpuclean makes before reading visibilities (the MSs' metadata, the outputs' folder, "
              "memory), then exit 0"),
          yes("mem", 1, "<percentage>", "Use at most this percentage of the machine's memory.",
              [](ImageOptions& o, const GivenOption& g) { o.resources.mem_percent = v::at_least(g, 0, true); },
              "caps the host memory gpuclean plans for (the visibilities it keeps, their per-channel copies); a run "
              "that cannot fit is refused before reading (exit 4)"),
          yes("abs-mem,absmem", 1, "<gigabytes>", "Use at most this much memory (GiB).",
              [](ImageOptions& o, const GivenOption& g) { o.resources.abs_mem_gb = v::at_least(g, 0, true); },
              "as -mem; the lower of the two caps holds"),
          yes("j", 1, "<threads>", "Threads to use (default: every core).",
              [](ImageOptions& o, const GivenOption& g) { o.run.threads = static_cast<int>(v::count(g, 1)); }),
          mapped("parallel-reordering", 1, "<count>", "Measurement sets reordered at once.",
                 "gpuclean reorders nothing: it reads the MSs one after another into memory",
                 [](ImageOptions& o, const GivenOption& g) {
                   v::count(g, 1);
                   note(o, g, "gpuclean reorders nothing: it reads the MSs one after another into memory");
                 }),
          mapped("parallel-gridding", 1, "<count>", "Gridders run at once.",
                 "gpuclean grids one output channel at a time on the host, each with all -j threads (and each GPU "
                 "its own channels), which any count allows",
                 [](ImageOptions& o, const GivenOption& g) {
                   v::count(g, 1);
                   note(o, g, "gpuclean grids one output channel at a time on the host, each with all -j threads");
                 }),
          mapped("no-work-on-master", 0, "", "MPI: do no gridding on the master rank.", mpi),
          mapped("channel-to-node", 1, "<list>", "MPI: which rank images each output channel.", mpi),
          mapped("max-mpi-message-size", 1, "<size>", "MPI: the largest message.", mpi),
          mapped("reorder", 0, "", "Force reordering the MS.", no_reorder),
          mapped("no-reorder", 0, "", "Never reorder the MS.", no_reorder),
          mapped("reuse-reordered", 0, "", "Reuse reordered files of an earlier run.",
                 no_reorder + ", so there are none to reuse: the MS is read"),
          mapped("save-reordered", 0, "", "Keep the reordered files.", no_reorder),
          yes("update-model-required", 0, "", "Leave valid model visibilities in the model column (the default).",
              [](ImageOptions& o, const GivenOption&) { o.deconvolution.update_model_required = true; }),
          yes("no-update-model-required", 0, "", "The model column need not hold the final model.",
              [](ImageOptions& o, const GivenOption&) { o.deconvolution.update_model_required = false; }),
          yes("no-dirty", 0, "", "Do not write the dirty image.",
              [](ImageOptions& o, const GivenOption&) { o.no_dirty = true; }),
          yes("save-first-residual", 0, "", "Write the residual of the first major iteration.",
              [](ImageOptions& o, const GivenOption&) { o.deconvolution.save_first_residual = true; }),
      });
}

}  // namespace gpuclean::app::wsclean_rows

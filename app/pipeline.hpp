#pragma once
// One observation's deconvolution as three stages, so that the single command runs them in a
// row and batch mode runs them on a reader thread, the GPU workers and a writer thread:
//   load  (read FITS, check it, prepare the PSF, mask and restoring beam)  -> LoadedObservation
//   clean (on a Deconvolver the caller keeps)                              -> CleanResult
//   write (FITS outputs, components, JSON, quick-look PNG, selection comparison)

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/log.hpp"
#include "app/run_options.hpp"
#include "app/run_report.hpp"
#include "clean/deconvolution.hpp"
#include "clean/deconvolver.hpp"
#include "clean/psf.hpp"
#include "io/fits_header.hpp"
#include "io/fits_image.hpp"
#include "io/fits_writer.hpp"
#include "io/wcs.hpp"

namespace gpuclean::app {

struct LoadedObservation {
  RunOptions options;
  clean::HostImage dirty;  ///< its size only (no pixels) while the image is on the device
  std::optional<clean::DeviceImage> dirty_device;
  clean::PreparedPsf psf;
  std::vector<std::uint8_t> mask;
  io::FitsHeader header;
  std::vector<long> axes;
  std::optional<io::CelestialWcs> wcs;
  RunReport report;  ///< filled as the stages go
  /// What the run was watched for (clean_observation() sets it up): the quick-look percentiles
  /// and --compare-select's cycles, for write_observation().
  std::optional<clean::RunRecord> observed;
};

/// --compare-select's outputs: PREFIX.csv, .json and .png (--compare-prefix, or the restored
/// image's name without .fits, plus "-select").
struct ComparePaths {
  std::string csv, json, png;
};
ComparePaths compare_paths(const RunOptions& options);

/// Every file the run writes, in the order written (the restored image last, so that its
/// presence means the others are there).
std::vector<std::string> output_paths(const RunOptions& options);

/// Throws unless every output can be written (distinct names, none an input, none existing
/// unless --overwrite). Call before any work so that a run never ends on "file exists".
void check_outputs(const RunOptions& options);

/// A run on the CPU of a dirty image on the device (a CUDA array from Python) needs it on the
/// host: downloads it there (and says so in the report). Nothing otherwise.
void host_dirty_for_cpu(LoadedObservation& obs, clean::Device device);

/// clean::resolve_device(), its note in the verbose log.
clean::Device resolve_device(clean::Device requested, const Log& log);

/// The images an observation starts from: read from the files the options name, or handed over
/// in memory (the Python package). The mask is optional (--fits-mask).
struct ObservationImages {
  io::FitsImage dirty, psf;
  std::optional<clean::HostImage> mask;
  /// The Python package's CUDA array: then `dirty` holds the header, axes, size and NaN count
  /// only, and `dirty_not_nan` its not-NaN pixels (empty when none is NaN).
  std::optional<clean::DeviceImage> dirty_device;
  std::vector<std::uint8_t> dirty_not_nan;
};

/// Reads the inputs and prepares them (prepare_observation); report.seconds.read includes the reading.
LoadedObservation load_observation(const RunOptions& options, const Log& log);

/// Checks the images and prepares the PSF, mask and restoring beam; fills report.{dirty, psf,
/// output, algorithm, width, height, nan_pixels, beam*, seconds.read}.
LoadedObservation prepare_observation(const RunOptions& options, ObservationImages images, const Log& log);

/// The observation as the run facade's work table: one plane with its mask and restoring beam.
clean::WorkTable observation_table(const LoadedObservation& obs);

/// The run plan on `device` (resolve_device()'s answer, or a batch worker's): the CPU instead when
/// the GPU cannot hold this observation, with a warning, for --device auto; InsufficientGpuMemory
/// for --device gpu.
clean::RunPlan plan_observation(const LoadedObservation& obs, clean::Device device, const Log& log);

/// Runs CLEAN (restoration included) through the run facade as `plan` says, with the pool's
/// deconvolver (made when missing, kept for the caller's next observation).
clean::CleanResult clean_observation(LoadedObservation& obs, const clean::RunPlan& plan, clean::DeconvolverPool& pool,
                                     const Log& log);

/// Fills obs.report's image statistics (residual RMS, model flux, restored peak).
void summarize_observation(LoadedObservation& obs, const clean::CleanResult& result);

/// Writes every output, all or none (io::StagedOutputs: a failure on any removes the others);
/// fills the rest of obs.report.
void write_observation(LoadedObservation& obs, const clean::CleanResult& result, const Log& log);

/// What a whole run leaves: the result and the report (the JSON summary's data).
struct RunOutcome {
  clean::CleanResult result;
  RunReport report;
};

/// One observation from start to end, as the single command runs it: validate the settings,
/// check the outputs, pick the device, `load`, clean, and write the outputs (none when
/// options.output is empty: then only the report is filled). Throws on any failure.
RunOutcome run_observation(const RunOptions& options, const std::function<LoadedObservation(const Log&)>& load);

}  // namespace gpuclean::app

#include "app/pipeline.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/compare/select_chart.hpp"
#include "app/compare/select_report.hpp"
#include "app/errors.hpp"
#include "app/plane_io.hpp"
#include "app/provenance.hpp"
#include "app/quicklook.hpp"
#include "app/version.hpp"
#include "clean/beam.hpp"
#include "clean/clean_mask.hpp"
#include "clean/errors.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/image_stats.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "io/staged_outputs.hpp"
#include "io/text_writer.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

ComparePaths compare_paths(const RunOptions& o) {
  std::string prefix = o.compare_prefix;
  if (prefix.empty()) {
    prefix = o.output;
    for (const char* ext : {".fits", ".fit", ".fts", ".FITS"}) {
      const std::string e = ext;
      if (prefix.size() > e.size() && prefix.compare(prefix.size() - e.size(), e.size(), e) == 0) {
        prefix.resize(prefix.size() - e.size());
        break;
      }
    }
    prefix += "-select";
  }
  return {prefix + ".csv", prefix + ".json", prefix + ".png"};
}

std::vector<std::string> output_paths(const RunOptions& o) {
  std::vector<std::string> out;
  for (const auto* p : {&o.residual, &o.model, &o.components, &o.quicklook, &o.noise_map}) {
    if (!p->empty()) out.push_back(*p);
  }
  if (o.settings.compare_select) {
    const ComparePaths c = compare_paths(o);
    out.insert(out.end(), {c.csv, c.json, c.png});
  }
  if (!o.json.empty() && o.json != "-") out.push_back(o.json);
  out.push_back(o.output);
  return out;
}

void check_outputs(const RunOptions& o) {
  io::WriteOptions base;
  base.overwrite = o.overwrite;
  base.inputs = {o.dirty, o.psf};
  if (!o.fits_mask.empty()) base.inputs.push_back(o.fits_mask);
  const std::vector<std::string> outputs = output_paths(o);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (outputs[i] == outputs[j]) {
        throw clean::InvalidSettings("'" + outputs[i] + "' is given as two different outputs; give each output its own name.");
      }
    }
    io::check_output_path(outputs[i], base);
  }
  if (!o.noise_map.empty() && !o.settings.local_rms.enabled)
    throw clean::InvalidSettings("--noise-map writes the --local-rms noise map; add --local-rms.");
  if (!o.quicklook.empty() &&
      !(o.quicklook_low >= 0.0 && o.quicklook_low < o.quicklook_high && o.quicklook_high <= 100.0)) {
    throw clean::InvalidSettings("--quicklook-range LOW HIGH must satisfy 0 <= LOW < HIGH <= 100 (percent).");
  }
}

void host_dirty_for_cpu(LoadedObservation& obs, clean::Device device) {
  if (!obs.dirty_device || device == clean::Device::kGpu) return;
#ifdef GPUCLEAN_HAVE_CUDA
  obs.dirty = clean::download_device_image(*obs.dirty_device);
#endif
  obs.dirty_device.reset();
  obs.report.dirty_on_device = false;
}

clean::Device resolve_device(clean::Device requested, const Log& log) {
  std::string note;
  const clean::Device device = clean::resolve_device(requested, &note);
  if (!note.empty()) log.verbose("%s", note.c_str());
  return device;
}

LoadedObservation load_observation(const RunOptions& o, const Log& log) {
  const auto t = Clock::now();
  ObservationImages images{io::read_fits_image(o.dirty), io::read_fits_image(o.psf), std::nullopt, std::nullopt, {}};
  if (!o.fits_mask.empty()) images.mask = to_host(io::read_fits_image(o.fits_mask));
  LoadedObservation obs = prepare_observation(o, std::move(images), log);
  obs.report.seconds.read = since(t);
  return obs;
}

LoadedObservation prepare_observation(const RunOptions& o, ObservationImages images, const Log& log) {
  LoadedObservation obs;
  obs.options = o;
  const clean::CleanSettings& s = o.settings;
  RunReport& report = obs.report;
  report.dirty = o.dirty;
  report.psf = o.psf;
  report.output = o.output;
  report.algorithm = s.multiscale.enabled ? "multiscale" : std::string(clean::to_string(s.algorithm));

  const auto t = Clock::now();
  io::FitsImage& dirty_file = images.dirty;
  io::FitsImage& psf_file = images.psf;
  const std::optional<clean::HostImage>& mask_image = images.mask;
  report.width = dirty_file.width;
  report.height = dirty_file.height;
  report.nan_pixels = dirty_file.nan_count;
  obs.header = dirty_file.header;
  obs.axes = dirty_file.axes;
  obs.wcs = io::CelestialWcs::from_header(obs.header);
  if (dirty_file.nan_count == dirty_file.width * dirty_file.height) {
    throw clean::InvalidInput("every pixel of '" + o.dirty + "' is NaN or blank; there is nothing to clean.");
  }
  if (dirty_file.nan_count > 0) {
    log.verbose("%zu NaN/blank pixels in the dirty image are treated as missing data", dirty_file.nan_count);
  }
  if (images.dirty_device) {
    obs.dirty.width = dirty_file.width;
    obs.dirty.height = dirty_file.height;
    obs.dirty_device = images.dirty_device;
    report.dirty_on_device = true;
  } else {
    obs.dirty = to_host(std::move(dirty_file));
  }
  std::string warning;
  obs.psf = prepare_fits_psf(std::move(psf_file), obs.dirty.width, obs.dirty.height, o.psf_unchecked, &warning);
  if (!warning.empty()) log.warn("%s", warning.c_str());
  obs.mask = obs.dirty_device ? clean::make_clean_mask(obs.dirty.width, obs.dirty.height, images.dirty_not_nan,
                                                       mask_image ? &*mask_image : nullptr, s.clean_border_percent)
                              : clean::make_clean_mask(obs.dirty, mask_image ? &*mask_image : nullptr,
                                                       s.clean_border_percent);

  // Restoring beam: fitted to the PSF unless given.
  if (s.beam_shape && !obs.wcs) {
    throw clean::InvalidSettings("--beam-shape needs the pixel scale, but '" + o.dirty +
                                 "' has no celestial WCS (CTYPE/CDELT); leave --beam-shape out to fit the PSF.");
  }
  const RestoringBeam beam = restoring_beam(s, obs.psf, obs.wcs);
  report.beam_fitted = beam.fitted;
  report.beam = beam.sky;
  report.beam_pixels = beam.pixels;
  if (report.beam) {
    log.verbose("restoring beam %s: %.3f\" x %.3f\" at %.1f deg (%.2f x %.2f pixels)",
                report.beam_fitted ? "fitted" : "given", report.beam->bmaj_arcsec, report.beam->bmin_arcsec,
                report.beam->bpa_deg, report.beam_pixels.fwhm_major_pixels(), report.beam_pixels.fwhm_minor_pixels());
  } else {
    log.warn("'%s' has no celestial WCS; the beam is %.2f x %.2f pixels and BMAJ/BMIN are not written",
             o.dirty.c_str(), report.beam_pixels.fwhm_major_pixels(), report.beam_pixels.fwhm_minor_pixels());
  }
  report.seconds.read = since(t);
  return obs;
}

clean::WorkTable observation_table(const LoadedObservation& obs) {
  return clean::one_plane_table(obs.dirty, obs.psf, &obs.mask, &obs.report.beam_pixels);
}

clean::RunPlan plan_observation(const LoadedObservation& obs, clean::Device device, const Log& log) {
  const clean::RunPlan plan = clean::plan_run(observation_table(obs), obs.options.settings, device);
  if (!plan.fallback.empty()) log.warn("%s", plan.fallback.c_str());
  return plan;
}

clean::CleanResult clean_observation(LoadedObservation& obs, const clean::RunPlan& plan, clean::DeconvolverPool& pool,
                                     const Log& log) {
  const clean::Device device = plan.device;
  const RunOptions& o = obs.options;
  const clean::CleanSettings& s = o.settings;
  RunReport& report = obs.report;
  if (s.compare_select && (device != clean::Device::kGpu || s.algorithm != clean::Algorithm::kClark)) {
    throw clean::InvalidSettings("--compare-select compares the GPU selection backends inside GPU Clark; it needs "
                                 "--algorithm clark on a usable GPU (--device gpu or auto).");
  }
  report.device = std::string(clean::to_string(device));
  log.info("gpuclean %s: %s CLEAN on %s, %zux%zu image, gain %.3g, niter %zu", kVersion, report.algorithm.c_str(),
           report.device.c_str(), obs.dirty.width, obs.dirty.height, s.gain, s.niter);
  log.info("stopping rules: %s", clean::describe_stopping_rules(s).c_str());
  const auto t = Clock::now();
  // What this front end adds to the problem: the quick-look scaling, the noise map, a dirty image on the device.
  clean::ProblemExtras extras;
  std::vector<double> quantiles;
  if (!o.quicklook.empty()) quantiles = {o.quicklook_low / 100.0, o.quicklook_high / 100.0};
  obs.observed.emplace(std::move(quantiles), s.compare_select);
  extras.observer = &*obs.observed;
  extras.keep_noise_map = !o.noise_map.empty();
  extras.dirty_on_device = obs.dirty_device ? &*obs.dirty_device : nullptr;
  const clean::WorkTable table = observation_table(obs);
  clean::Deconvolution deconvolution(s, table, plan, &extras);
  clean::CleanResult result = std::move(deconvolution.run([&](const clean::CycleReport& c) {
    log.info("cycle %4zu  components %8zu  peak %11.4e Jy  model flux %11.4e Jy  threshold %10.3e  %8.2f s",
             c.cycle, c.iterations, c.peak, c.model_flux, c.threshold, c.seconds);
    if (c.candidates) log.verbose("           active set %zu pixels", c.candidates);
  }, {}, &pool).front());
  report.seconds.clean = since(t) - result.diagnostics.seconds.restore;
  report.seconds.restore = result.diagnostics.seconds.restore;
  if (const clean::MinorCycleStats& m = result.diagnostics.minor_stats; m.cycles > 0) {
    log.verbose("minor cycles on the GPU: %zu independent clusters over %zu cycles, longest chain %zu components, "
                "%.0f%% of the SMs busy", m.clusters, m.cycles, m.longest_chain, 100.0 * m.sm_busy_fraction);
  }
  return result;
}

void summarize_observation(LoadedObservation& obs, const clean::CleanResult& result) {
  RunReport& report = obs.report;
  report.rms_residual = clean::rms(result.images.residual.pixels);
  report.model_flux = clean::total_flux(result.images.model.pixels);
  report.restored_peak = clean::positive_peak(result.images.restored.pixels);
}

void write_observation(LoadedObservation& obs, const clean::CleanResult& result, const Log& log) {
  const RunOptions& o = obs.options;
  const clean::CleanSettings& s = o.settings;
  RunReport& report = obs.report;
  const clean::HostImage& restored = result.images.restored;
  summarize_observation(obs, result);

  const auto t = Clock::now();
  // Every output is staged and all appear together at the end, or none (a failure on the last
  // one removes the others): each writer replaces its reserved staging file, and the commit
  // honours --overwrite.
  io::StagedOutputs staged(o.overwrite);
  std::vector<std::string> inputs = {o.dirty, o.psf};
  if (!o.fits_mask.empty()) inputs.push_back(o.fits_mask);
  const io::WriteOptions w = provenance(o, {&result}, report.device, "", inputs);
  io::WriteOptions restored_opt = w;
  if (report.beam) restored_opt.beam = beam_keywords(*report.beam);
  const std::size_t width = obs.dirty.width, height = obs.dirty.height;

  // In output_paths() order: the restored image comes last.
  if (!o.residual.empty()) {
    io::write_fits_image(staged.stage(o.residual), result.images.residual.pixels.data(), width, height, obs.header, obs.axes, restored_opt);
  }
  if (!o.model.empty()) {
    io::WriteOptions model_opt = w;
    model_opt.bunit = "JY/PIXEL";
    io::write_fits_image(staged.stage(o.model), result.images.model.pixels.data(), width, height, obs.header, obs.axes, model_opt);
  }
  if (!o.components.empty())
    io::write_text_file(staged.stage(o.components), components_csv(result, obs.wcs, s.multiscale.enabled), true);
  if (!o.noise_map.empty()) {
    if (result.images.noise_map.size() != width * height) throw std::logic_error("the deconvolver did not keep the noise map");
    io::write_fits_image(staged.stage(o.noise_map), result.images.noise_map.pixels.data(), width, height, obs.header, obs.axes,
                         restored_opt);
  }
  if (!o.quicklook.empty()) {
    if (!obs.observed || obs.observed->quantile_values.size() != 2)
      throw std::logic_error("the deconvolver did not report the quick-look percentiles");
    const std::vector<float>& q = obs.observed->quantile_values;
    QuicklookScale scale{q[0], q[1], o.quicklook_low,
                         o.quicklook_high};
    write_quicklook(staged.stage(o.quicklook), restored, scale, o.output, true);
    log.verbose("quick-look %s: linear from %.4g to %.4g Jy/beam (%.3g%% and %.3g%%)", o.quicklook.c_str(), scale.low,
                scale.high, scale.low_percent, scale.high_percent);
  }
  if (s.compare_select) {
    const ComparePaths c = compare_paths(o);
    if (!obs.observed) throw std::logic_error("the run was not watched for --compare-select");
    const SelectComparisonTable table(obs.observed->select_comparison);
    io::write_text_file(staged.stage(c.csv), table.csv(), true);
    io::write_text_file(staged.stage(c.json), table.json().dump(2) + "\n", true);
    write_select_chart(staged.stage(c.png), table, std::filesystem::path(o.output).filename().string(), true);
    if (log.shows_info()) table.print(o.json == "-" ? stderr : stdout);
    log.info("selection comparison: %s, %s, %s", c.csv.c_str(), c.json.c_str(), c.png.c_str());
  }
  report.seconds.write = since(t);
  std::string json_text;
  if (!o.json.empty()) {
    report.seconds.total = report.seconds.read + report.seconds.clean + report.seconds.restore + report.seconds.write;
    json_text = make_summary_json(report, result, o).dump(2) + "\n";
    if (o.json != "-") io::write_text_file(staged.stage(o.json), json_text, true);
  }
  io::write_fits_image(staged.stage(o.output), restored.pixels.data(), width, height, obs.header, obs.axes,
                       restored_opt);
  staged.commit();
  if (o.json == "-") std::cout << json_text << std::flush;
  report.seconds.write = since(t);
}

}  // namespace gpuclean::app

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/run_options.hpp"
#include "app/run_report.hpp"
#include "app/version.hpp"
#include "clean/beam.hpp"
#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/errors.hpp"
#include "clean/image_stats.hpp"
#include "clean/psf.hpp"
#include "clean/restore.hpp"
#ifdef GPUCLEAN_HAVE_CUDA
#include "clean/gpu/gpu_image_state.hpp"
#endif
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "io/text_writer.hpp"
#include "io/wcs.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

clean::HostImage to_host(io::FitsImage&& f) {
  clean::HostImage h;
  h.width = f.width;
  h.height = f.height;
  h.pixels = std::move(f.pixels);
  return h;
}

// --device auto picks the GPU when this build has CUDA and a device is usable.
clean::Device resolve_device(clean::Device requested, const Log& log) {
  if (requested == clean::Device::kCpu) return clean::Device::kCpu;
  if (requested == clean::Device::kGpu) {
    if (cuda::built_with_cuda() && !cuda::has_usable_device()) {
      throw RuntimeFailure("--device gpu, but " + cuda::describe_device() + "; use --device cpu (or auto).");
    }
    return clean::Device::kGpu;  // the factory says so when this build has no CUDA
  }
  const bool gpu = cuda::built_with_cuda() && cuda::has_usable_device();
  log.verbose("device: %s; using the %s path", cuda::describe_device().c_str(), gpu ? "GPU" : "CPU");
  return gpu ? clean::Device::kGpu : clean::Device::kCpu;
}

// The GPU must hold the whole run: checked before any work. --device auto falls back to the CPU.
clean::Device check_device_memory(clean::Device device, clean::Device requested, std::size_t width,
                                  std::size_t height, std::size_t psf_width, std::size_t psf_height,
                                  const clean::CleanSettings& s, const Log& log) {
#ifdef GPUCLEAN_HAVE_CUDA
  if (device != clean::Device::kGpu) return device;
  try {
    clean::gpu::check_gpu_memory(width, height, psf_width, psf_height, s);
  } catch (const clean::InsufficientGpuMemory& e) {
    if (requested == clean::Device::kGpu) throw RuntimeFailure(e.what());
    log.warn("%s Running on the CPU instead.", e.what());
    return clean::Device::kCpu;
  }
#else
  (void)requested, (void)width, (void)height, (void)psf_width, (void)psf_height, (void)s, (void)log;
#endif
  return device;
}

std::vector<std::string> history_lines(const std::string& command) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < command.size(); i += 70) lines.push_back(command.substr(i, 70));
  return lines;
}

clean::PixelToSky pixel_to_sky(const io::CelestialWcs& wcs) {
  clean::PixelToSky t;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) t.m[i][j] = wcs.m[i][j];
  return t;
}

}  // namespace

void run_clean(const RunOptions& o) {
  const auto t_start = Clock::now();
  const clean::CleanSettings& s = o.settings;
  clean::validate(s);
  const Log log(o.verbosity, o.json == "-");

  // Every output is checked before any work, so a run never ends on "file exists".
  io::WriteOptions base;
  base.overwrite = o.overwrite;
  base.inputs = {o.dirty, o.psf};
  if (!o.fits_mask.empty()) base.inputs.push_back(o.fits_mask);
  std::vector<std::string> outputs = {o.output};
  for (const auto* p : {&o.model, &o.residual, &o.components}) {
    if (!p->empty()) outputs.push_back(*p);
  }
  if (!o.json.empty() && o.json != "-") outputs.push_back(o.json);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (outputs[i] == outputs[j]) {
        throw clean::InvalidSettings("'" + outputs[i] + "' is given as two different outputs; give each output its own name.");
      }
    }
    io::check_output_path(outputs[i], base);
  }
  clean::Device device = resolve_device(s.device, log);
  clean::make_deconvolver(s.algorithm, device);  // refuses a device this build lacks before any work

  RunReport report;
  report.dirty = o.dirty;
  report.psf = o.psf;
  report.output = o.output;
  report.algorithm = std::string(clean::to_string(s.algorithm));

  // Read.
  auto t = Clock::now();
  io::FitsImage dirty_file = io::read_fits_image(o.dirty);
  io::FitsImage psf_file = io::read_fits_image(o.psf);
  std::optional<clean::HostImage> mask_image;
  if (!o.fits_mask.empty()) mask_image = to_host(io::read_fits_image(o.fits_mask));
  report.seconds.read = since(t);
  report.width = dirty_file.width;
  report.height = dirty_file.height;
  report.nan_pixels = dirty_file.nan_count;
  device = check_device_memory(device, s.device, dirty_file.width, dirty_file.height, psf_file.width, psf_file.height,
                               s, log);
  auto deconvolver = clean::make_deconvolver(s.algorithm, device);
  report.device = std::string(clean::to_string(device));
  const io::FitsHeader header = dirty_file.header;
  const std::vector<long> axes = dirty_file.axes;
  const auto wcs = io::CelestialWcs::from_header(header);
  if (dirty_file.nan_count == dirty_file.width * dirty_file.height) {
    throw clean::InvalidInput("every pixel of '" + o.dirty + "' is NaN or blank; there is nothing to clean.");
  }
  if (dirty_file.nan_count > 0) {
    log.verbose("%zu NaN/blank pixels in the dirty image are treated as missing data", dirty_file.nan_count);
  }
  const clean::HostImage dirty = to_host(std::move(dirty_file));
  std::string warning;
  const clean::PreparedPsf psf = clean::prepare_psf(to_host(std::move(psf_file)), dirty.width, dirty.height, &warning);
  if (!warning.empty()) log.warn("%s", warning.c_str());
  const std::vector<std::uint8_t> mask =
      clean::make_clean_mask(dirty, mask_image ? &*mask_image : nullptr, s.clean_border_percent);

  // Restoring beam: fitted to the PSF unless given.
  if (s.beam_shape) {
    if (!wcs) {
      throw clean::InvalidSettings("--beam-shape needs the pixel scale, but '" + o.dirty +
                                   "' has no celestial WCS (CTYPE/CDELT); leave --beam-shape out to fit the PSF.");
    }
    report.beam_fitted = false;
    report.beam = clean::SkyBeam{s.beam_shape->bmaj_arcsec, s.beam_shape->bmin_arcsec, s.beam_shape->bpa_deg};
    report.beam_pixels = clean::from_sky(*report.beam, pixel_to_sky(*wcs));
  } else {
    report.beam_pixels = clean::fit_psf_beam(psf, s.beam_fit);
    if (wcs) report.beam = clean::to_sky(report.beam_pixels, pixel_to_sky(*wcs));
  }
  if (report.beam) {
    log.verbose("restoring beam %s: %.3f\" x %.3f\" at %.1f deg (%.2f x %.2f pixels)",
                report.beam_fitted ? "fitted" : "given", report.beam->bmaj_arcsec, report.beam->bmin_arcsec,
                report.beam->bpa_deg, report.beam_pixels.fwhm_major_pixels(), report.beam_pixels.fwhm_minor_pixels());
  } else {
    log.warn("'%s' has no celestial WCS; the beam is %.2f x %.2f pixels and BMAJ/BMIN are not written",
             o.dirty.c_str(), report.beam_pixels.fwhm_major_pixels(), report.beam_pixels.fwhm_minor_pixels());
  }

  // Clean.
  log.info("gpuclean %s: %s CLEAN on %s, %zux%zu image, gain %.3g, niter %zu", kVersion,
           report.algorithm.c_str(), report.device.c_str(), dirty.width, dirty.height, s.gain, s.niter);
  t = Clock::now();
  const clean::CleanProblem problem{dirty, psf, mask, &report.beam_pixels};
  const clean::CleanResult result = deconvolver->run(problem, s, [&](const clean::CycleReport& c) {
    log.info("cycle %4zu  components %8zu  peak %11.4e Jy  model flux %11.4e Jy  threshold %10.3e  %8.2f s",
             c.cycle, c.iterations, c.peak, c.model_flux, c.threshold, c.seconds);
    if (c.candidates) log.verbose("           active set %zu pixels", c.candidates);
  });
  report.seconds.clean = since(t);

  // Restored by the deconvolver, where its images live.
  const clean::HostImage& restored = result.restored;
  report.seconds.restore = result.seconds.restore;
  report.seconds.clean -= result.seconds.restore;
  report.rms_residual = clean::rms(result.residual.pixels);
  report.model_flux = clean::total_flux(result.model.pixels);
  for (float v : restored.pixels) {
    if (std::isfinite(v) && v > report.restored_peak) report.restored_peak = v;
  }

  // Write.
  t = Clock::now();
  io::WriteOptions w = base;
  w.keywords = {
      {"ORIGIN", std::string("gpuclean ") + kVersion, "GPU Clark CLEAN"},
      {"GCVERSIO", std::string(kVersion), "gpuclean version"},
      {"GCALGO", report.algorithm, "CLEAN algorithm"},
      {"GCDEVICE", report.device, "device that ran CLEAN"},
      {"GCNITER", static_cast<long long>(s.niter), "maximum number of components"},
      {"GCITER", static_cast<long long>(result.iterations), "components cleaned"},
      {"GCMAJOR", static_cast<long long>(result.major_cycles), "major cycles"},
      {"GCGAIN", s.gain, "loop gain"},
      {"GCMGAIN", s.mgain, "major-cycle gain"},
      {"GCTHRESH", s.threshold, "absolute threshold"},
      {"GCATHRES", s.auto_threshold, "auto-threshold [sigma]"},
      {"GCFTHRES", result.threshold, "threshold in force at the end"},
      {"GCNEGCM", s.allow_negative, "negative components allowed"},
      {"GCSTOP", std::string(clean::to_string(result.reason)), "why CLEAN stopped"},
  };
  w.history = history_lines(o.command_line);
  char line[96];
  std::snprintf(line, sizeof line, "gpuclean %s: %s on %s, %zu components, stop %s", kVersion,
                report.algorithm.c_str(), report.device.c_str(), result.iterations,
                std::string(clean::to_string(result.reason)).c_str());
  w.history.push_back(line);
  std::optional<io::BeamKeywords> beam_kw;
  if (report.beam) beam_kw = io::BeamKeywords{report.beam->bmaj_arcsec / 3600.0, report.beam->bmin_arcsec / 3600.0, report.beam->bpa_deg};

  io::WriteOptions restored_opt = w;
  restored_opt.beam = beam_kw;
  io::write_fits_image(o.output, restored.pixels.data(), restored.width, restored.height, header, axes, restored_opt);
  if (!o.residual.empty()) {
    io::write_fits_image(o.residual, result.residual.pixels.data(), dirty.width, dirty.height, header, axes, restored_opt);
  }
  if (!o.model.empty()) {
    io::WriteOptions model_opt = w;
    model_opt.bunit = "JY/PIXEL";
    io::write_fits_image(o.model, result.model.pixels.data(), dirty.width, dirty.height, header, axes, model_opt);
  }
  if (!o.components.empty()) io::write_text_file(o.components, components_csv(result, wcs), o.overwrite);
  report.seconds.write = since(t);
  report.seconds.total = since(t_start);

  if (!o.json.empty()) {
    const std::string text = make_summary_json(report, result, s).dump(2) + "\n";
    if (o.json == "-") {
      std::cout << text << std::flush;
    } else {
      io::write_text_file(o.json, text, o.overwrite);
    }
  }
  log.info("done: %zu components in %zu major cycles, stopped on %s; peak residual %.4e Jy/beam, "
           "residual RMS %.4e Jy/beam, model flux %.5g Jy; %.2f s (read %.2f, clean %.2f, restore %.2f, write %.2f)",
           result.iterations, result.major_cycles, std::string(clean::to_string(result.reason)).c_str(),
           result.peak_residual, report.rms_residual, report.model_flux, report.seconds.total, report.seconds.read,
           report.seconds.clean, report.seconds.restore, report.seconds.write);
  log.verbose("stages: select %.3f s, minor cycles %.3f s, PSF convolutions %.3f s, restore %.3f s%s",
              result.seconds.select, result.seconds.minor, result.seconds.convolve, result.seconds.restore,
              device == clean::Device::kGpu
                  ? (", peak GPU memory " + std::to_string(result.peak_gpu_bytes >> 20) + " MiB").c_str()
                  : "");
}

}  // namespace gpuclean::app

#include "app/cube/cube_output.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <iostream>
#include <limits>
#include <sstream>

#include "app/compare/select_chart.hpp"
#include "app/compare/select_report.hpp"
#include "app/cube/cube_run.hpp"
#include "app/cube/plane_pool.hpp"
#include "app/pipeline.hpp"
#include "app/plane_io.hpp"
#include "app/provenance.hpp"
#include "app/summary/summary_json.hpp"
#include "clean/beam.hpp"
#include "clean/image_stats.hpp"
#include "clean/mfs.hpp"
#include "clean/plane_set.hpp"
#include "clean/source_list.hpp"
#include "io/fits_cube.hpp"
#include "io/fits_writer.hpp"
#include "io/staged_outputs.hpp"
#include "io/text_writer.hpp"

namespace gpuclean::app {
namespace {

using Clock = std::chrono::steady_clock;

const char* kKinds[] = {"residual", "model", "image"};  // the image last, as for one plane

std::vector<std::string> pols_of(const io::WscleanChannelSet& set) {
  return set.polarizations.empty() ? std::vector<std::string>{""} : set.polarizations;
}

std::string mode_of(const clean::CleanSettings& s) {
  const auto join = s.join();
  return join ? std::string(clean::to_string(*join)) : "independent";
}

std::optional<io::BeamKeywords> plane_beam_keywords(const InputPlane& p) {
  if (!p.sky_beam) return std::nullopt;
  return beam_keywords(*p.sky_beam);
}

// "hh:mm:ss.sss" and "+dd.mm.ss.sss", WSClean's source-list forms.
std::string ra_text(double deg) {
  double h = std::fmod(deg / 15.0 + 24.0, 24.0);
  const int hh = static_cast<int>(h);
  h = (h - hh) * 60.0;
  const int mm = static_cast<int>(h);
  const double ss = (h - mm) * 60.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%06.3f", hh, mm, ss);
  return buf;
}
std::string dec_text(double deg) {
  const char sign = deg < 0 ? '-' : '+';
  double d = std::abs(deg);
  const int dd = static_cast<int>(d);
  d = (d - dd) * 60.0;
  const int mm = static_cast<int>(d);
  const double ss = (d - mm) * 60.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%02d.%02d.%06.3f", sign, dd, mm, ss);
  return buf;
}

std::string components_csv(const RunOptions& o, const CubeInput& in, const CubeRunResult& run) {
  const bool multiscale = o.settings.multiscale.enabled;
  std::ostringstream out;
  out << (multiscale ? "channel,stokes,frequency_hz,x,y,ra_deg,dec_deg,flux_jy,scale_pixels\n"
                     : "channel,stokes,frequency_hz,x,y,ra_deg,dec_deg,flux_jy\n");
  char line[288];
  for (std::size_t g = 0; g < run.groups.size(); ++g) {
    const CleanGroup& group = run.groups[g];
    const clean::CleanResult& r = run.results[g];
    const std::size_t np = group.planes.size();
    const std::vector<clean::ModelSource> sources = clean::model_sources(r);
    for (std::size_t j = 0; j < np; ++j) {
      const InputPlane& p = in.planes[group.planes[j]];
      for (const clean::ModelSource& src : sources) {
        const double flux = clean::source_flux(r, src, j, np);
        double ra = std::numeric_limits<double>::quiet_NaN(), dec = ra;
        if (in.wcs) in.wcs->pixel_to_world(src.x, src.y, &ra, &dec);
        int len = std::snprintf(line, sizeof line, "%zu,%s,%.6f,%u,%u,%.9f,%.9f,%.9g", p.channel,
                                p.pol.empty() ? "I" : p.pol.c_str(), p.frequency_hz, src.x, src.y, ra, dec, flux);
        if (multiscale) len += std::snprintf(line + len, sizeof line - len, ",%.6g", r.components.scales.at(src.scale).size);
        out.write(line, len);
        out << '\n';
      }
    }
  }
  return out.str();
}

nlohmann::json summary_json(const RunOptions& o, const CubeInput& in, const CubeRunResult& run,
                            const std::vector<PlaneView>& views, double write_seconds) {
  nlohmann::json j = summary_envelope("cube", o.command_line);
  j["input"] = in.wsclean ? "wsclean-channels" : "cube";
  j["dirty"] = o.dirty;
  j["psf"] = o.psf;
  j["output"] = o.output;
  j["device"] = run.device;
  if (!run.group_gpu.empty()) {  // the GPUs that cleaned, in order
    std::vector<int> gpus = run.group_gpu;
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    j["gpus"] = gpus;
  }
  j["settings"] = settings_json(o.settings);
  j["image"] = {{"width", in.planes.front().dirty.width}, {"height", in.planes.front().dirty.height}};
  j["channels"] = in.channels;
  j["stokes"] = in.stokes;
  j["weights"] = in.weights_from_headers ? "WSCIMGWG" : "equal";
  nlohmann::json runs = nlohmann::json::array();
  std::vector<std::size_t> run_of(in.planes.size(), 0);
  for (std::size_t g = 0; g < run.groups.size(); ++g) {
    for (std::size_t p : run.groups[g].planes) run_of[p] = g;
    const std::optional<int> gpu = g < run.group_gpu.size() ? std::optional<int>(run.group_gpu[g]) : std::nullopt;
    runs.push_back(run_json(run.results[g], o.settings, run.groups[g].planes, gpu));
  }
  // The statistics are three passes over every plane's images: over the pool, each plane's alone.
  std::vector<std::array<double, 3>> stats(in.planes.size());
  for_each_plane(in.planes.size(), plane_threads(in.planes.size(), o.settings.threads), [&](std::size_t i) {
    stats[i] = {clean::rms(views[i].residual->pixels), clean::total_flux(views[i].model->pixels),
                clean::positive_peak(views[i].restored->pixels)};
  });
  nlohmann::json planes = nlohmann::json::array();
  for (std::size_t i = 0; i < in.planes.size(); ++i) {
    const InputPlane& p = in.planes[i];
    nlohmann::json e = plane_json({i, run_of[i], stats[i][0], stats[i][1], stats[i][2], p.beam, p.sky_beam,
                                   !o.settings.beam_shape});
    e["channel"] = p.channel;
    e["stokes"] = p.pol.empty() ? "I" : p.pol;
    e["frequency_hz"] = p.frequency_hz;
    e["weight"] = p.weight;
    planes.push_back(std::move(e));
  }
  j["runs"] = std::move(runs);
  j["planes"] = std::move(planes);
  j["seconds"] = seconds_json(run.seconds_read, run.seconds_clean, std::nullopt, write_seconds);
  j["planes_per_second"] = static_cast<double>(in.planes.size()) / std::max(run.seconds_clean, 1e-9);
  return j;
}

// The header of Stokes parameter s's MFS images: NAME-MFS[-POL]-dirty.fits's, as WSClean wrote
// it, when the set has one; else channel 0's with the whole band in place of the channel's
// (centre and width on the FREQ axis, the last channel's end, the summed weight).
io::FitsHeader mfs_header(const CubeInput& in, std::size_t s) {
  if (s < in.mfs_headers.size() && in.mfs_headers[s]) return *in.mfs_headers[s];
  const InputPlane& first = in.plane(0, s);
  const InputPlane& last = in.plane(in.channels - 1, s);
  io::FitsHeader header = first.header;
  std::string axis = "3";
  if (header.get_string("CTYPE4").value_or("").rfind("FREQ", 0) == 0) axis = "4";
  const double lo = first.frequency_hz, hi = last.frequency_hz;
  header.set_double("CRVAL" + axis, 0.5 * (lo + hi));
  if (in.channels > 1) header.set_double("CDELT" + axis, (hi - lo) * in.channels / (in.channels - 1.0));
  const auto end = last.header.get_double("WSCCHANE");
  if (header.has("WSCCHANE") && end) header.set_int("WSCCHANE", static_cast<long long>(*end), "End channel index");
  if (header.has("WSCIMGWG") && in.weights_from_headers) {
    double total = 0.0;
    for (std::size_t c = 0; c < in.channels; ++c) total += in.plane(c, s).weight;
    header.set_double("WSCIMGWG", total, "Sum of imaging weights");
  }
  return header;
}

}  // namespace

std::vector<std::string> cube_output_paths(const RunOptions& o, const io::WscleanChannelSet* set) {
  std::vector<std::string> out;
  for (const auto* p : {&o.components, &o.cube.source_list}) {
    if (!p->empty()) out.push_back(*p);
  }
  if (!o.json.empty() && o.json != "-") out.push_back(o.json);
  if (o.settings.compare_select) {
    const ComparePaths c = compare_paths(o);
    out.insert(out.end(), {c.csv, c.json, c.png});
  }
  if (set) {
    for (const std::string& pol : pols_of(*set)) {
      for (std::size_t c = 0; c < set->channels; ++c)
        for (const char* kind : kKinds) out.push_back(io::wsclean_name(o.output, static_cast<int>(c), pol, kind));
      for (const char* kind : kKinds) out.push_back(io::wsclean_name(o.output, -1, pol, kind));
    }
    return out;
  }
  if (!o.residual.empty()) out.push_back(o.residual);
  if (!o.model.empty()) out.push_back(o.model);
  out.push_back(o.output);
  return out;
}

std::vector<PlaneView> plane_views(const CubeInput& in, const CubeRunResult& run) {
  std::vector<PlaneView> views(in.planes.size());
  for (std::size_t g = 0; g < run.groups.size(); ++g) {
    const clean::CleanResult& r = run.results[g];
    const CleanGroup& group = run.groups[g];
    for (std::size_t j = 0; j < group.planes.size(); ++j) {
      if (group.joined()) {
        const clean::PlaneImages& p = r.images.planes.at(j);
        views[group.planes[j]] = {&p.model, &p.residual, &p.restored, &r};
      } else {
        views[group.planes[j]] = {&r.images.model, &r.images.residual, &r.images.restored, &r};
      }
    }
  }
  return views;
}

std::string wsclean_source_list(const RunOptions& o, const CubeInput& in, const CubeRunResult& run) {
  double ref = 0.0;
  for (const auto& r : run.results) ref = std::max(ref, r.components.reference_frequency_hz);
  const clean::SpectralFitSettings fit = o.settings.spectral_fit();
  std::ostringstream out;
  char head[256];
  std::snprintf(head, sizeof head,
                "Format = Name, Type, Ra, Dec, I, SpectralIndex, LogarithmicSI, ReferenceFrequency='%.6f', "
                "MajorAxis, MinorAxis, Orientation\n",
                ref);
  out << head;
  const double pixel_arcsec = in.wcs ? in.wcs->pixel_scale_deg() * 3600.0 : 0.0;
  for (std::size_t g = 0; g < run.groups.size(); ++g) {
    const CleanGroup& group = run.groups[g];
    const InputPlane& first = in.planes[group.planes[0]];
    if (!first.pol.empty() && first.pol != "I") continue;  // a source list holds Stokes I
    const clean::CleanResult& r = run.results[g];
    std::vector<double> frequencies, weights;
    for (std::size_t j : group.planes) {
      frequencies.push_back(in.planes[j].frequency_hz);
      weights.push_back(in.planes[j].weight);
    }
    std::vector<std::size_t> per_scale(r.components.scales.size() + 1, 0);
    for (const clean::FittedSource& src : clean::fitted_sources(r, frequencies, weights, fit)) {
      const std::vector<double>& terms = src.terms;
      double ra = 0.0, dec = 0.0;
      if (in.wcs) in.wcs->pixel_to_world(src.x, src.y, &ra, &dec);
      std::ostringstream si;
      si.precision(10);
      for (std::size_t k = 1; k < terms.size(); ++k) si << (k > 1 ? "," : "") << terms[k];
      const double fwhm = src.fwhm_pixels * pixel_arcsec;
      const std::string name = (run.groups.size() > 1 ? "g" + std::to_string(g) : std::string()) + "s" +
                               std::to_string(src.scale) + "c" + std::to_string(per_scale[src.scale]++);
      char line[384];
      if (src.fwhm_pixels > 0.0)
        std::snprintf(line, sizeof line, "%s,GAUSSIAN,%s,%s,%.10g,[%s],%s,%.6f,%.6f,%.6f,0\n", name.c_str(),
                      ra_text(ra).c_str(), dec_text(dec).c_str(), terms[0], si.str().c_str(),
                      fit.logarithmic ? "true" : "false", ref, fwhm, fwhm);
      else
        std::snprintf(line, sizeof line, "%s,POINT,%s,%s,%.10g,[%s],%s,%.6f,,,\n", name.c_str(), ra_text(ra).c_str(),
                      dec_text(dec).c_str(), terms[0], si.str().c_str(), fit.logarithmic ? "true" : "false", ref);
      out << line;
    }
  }
  return out.str();
}

nlohmann::json write_cube_outputs(const RunOptions& o, const CubeInput& in, const CubeRunResult& run) {
  const auto t0 = Clock::now();
  const std::vector<PlaneView> views = plane_views(in, run);
  io::StagedOutputs staged(o.overwrite);
  std::vector<const clean::CleanResult*> results;
  for (const clean::CleanResult& r : run.results) results.push_back(&r);
  const io::WriteOptions base = provenance(o, results, run.device, mode_of(o.settings), in.inputs);
  const std::size_t width = in.planes.front().dirty.width, height = in.planes.front().dirty.height, n = width * height;
  if (!o.components.empty()) io::write_text_file(staged.stage(o.components), components_csv(o, in, run), true);
  if (!o.cube.source_list.empty())
    io::write_text_file(staged.stage(o.cube.source_list), wsclean_source_list(o, in, run), true);
  if (o.settings.compare_select) {  // one CLEAN run (validate_cube_options)
    const ComparePaths c = compare_paths(o);
    const SelectComparisonTable table(run.select_comparison);
    io::write_text_file(staged.stage(c.csv), table.csv(), true);
    io::write_text_file(staged.stage(c.json), table.json().dump(2) + "\n", true);
    write_select_chart(staged.stage(c.png), table, std::filesystem::path(o.output).filename().string(), true);
  }

  if (in.wsclean) {
    // Staged here in the serial order (commit renames in it), then written over the pool: per
    // Stokes parameter, a task per channel (its three files), then one for the MFS images.
    const std::size_t per_pol = in.channels + 1;
    std::vector<std::array<std::string, 3>> staged_names(in.stokes * per_pol);
    for (std::size_t s = 0; s < in.stokes; ++s) {
      const std::string pol = in.plane(0, s).pol;
      for (std::size_t c = 0; c <= in.channels; ++c)
        for (int k = 0; k < 3; ++k)
          staged_names[s * per_pol + c][k] = staged.stage(
              io::wsclean_name(o.output, c == in.channels ? -1 : static_cast<int>(c), pol, kKinds[k]));
    }
    // The MFS tasks (sums over every channel, a restore, three files) are taken first.
    std::vector<std::size_t> order;
    for (std::size_t s = 0; s < in.stokes; ++s) order.push_back(s * per_pol + in.channels);
    for (std::size_t t = 0; t < staged_names.size(); ++t)
      if (t % per_pol != in.channels) order.push_back(t);
    for_each_plane(order, plane_threads(staged_names.size(), o.settings.threads), [&](std::size_t t) {
      const std::size_t s = t / per_pol, c = t % per_pol;
      const std::array<std::string, 3>& names = staged_names[t];
      if (c < in.channels) {
        const InputPlane& p = in.plane(c, s);
        const PlaneView& v = views[s * in.channels + c];
        const clean::HostImage* images[] = {v.residual, v.model, v.restored};
        for (int k = 0; k < 3; ++k) {
          io::WriteOptions w = base;
          if (k == 1) w.bunit = "JY/PIXEL";
          else w.beam = plane_beam_keywords(p);
          io::write_fits_image(names[k], images[k]->pixels.data(), width, height, p.header, p.axes, w);
        }
        return;
      }
      // MFS: the channels' weighted mean; the image restored with the mean PSF's fitted beam.
      std::vector<clean::CleanPlane> channels;
      std::vector<const clean::HostImage*> residuals, models;
      for (std::size_t ch = 0; ch < in.channels; ++ch) {
        const InputPlane& p = in.plane(ch, s);
        channels.push_back({&p.dirty, &p.psf, p.frequency_hz, p.weight});
        residuals.push_back(views[s * in.channels + ch].residual);
        models.push_back(views[s * in.channels + ch].model);
      }
      const clean::MfsImages images_mfs =
          clean::mfs_images(channels, residuals, models, o.settings.beam_shape ? &in.plane(0, s).beam : nullptr,
                            o.settings.beam_fit, o.settings.threads);
      InputPlane mfs;
      mfs.beam = images_mfs.beam;
      mfs.sky_beam = o.settings.beam_shape ? in.plane(0, s).sky_beam : std::nullopt;
      if (!o.settings.beam_shape && in.wcs) mfs.sky_beam = clean::to_sky(mfs.beam, pixel_to_sky(*in.wcs));
      const io::FitsHeader header = mfs_header(in, s);
      const clean::HostImage* images[] = {&images_mfs.residual, &images_mfs.model, &images_mfs.restored};
      for (int k = 0; k < 3; ++k) {
        io::WriteOptions w = base;
        if (k == 1) w.bunit = "JY/PIXEL";
        else w.beam = plane_beam_keywords(mfs);
        io::write_fits_image(names[k], images[k]->pixels.data(), width, height, header, in.plane(0, s).axes, w);
      }
    });
  } else {
    std::vector<io::CubeBeam> beams;
    for (const InputPlane& p : in.planes) {
      if (!p.sky_beam) continue;
      const io::BeamKeywords k = beam_keywords(*p.sky_beam);
      beams.push_back({k.bmaj_deg, k.bmin_deg, k.bpa_deg});
    }
    if (beams.size() != in.planes.size()) beams.clear();
    std::vector<float> cube(in.planes.size() * n);
    auto write = [&](const std::string& path, const clean::HostImage* PlaneView::*which, bool model) {
      for_each_plane(in.planes.size(), plane_threads(in.planes.size(), o.settings.threads), [&](std::size_t i) {
        const InputPlane& p = in.planes[i];
        const clean::HostImage& img = *(views[p.stokes * in.channels + p.channel].*which);
        std::copy(img.pixels.begin(), img.pixels.end(), cube.begin() + in.layout.plane_index(p.channel, p.stokes) * n);
      });
      io::WriteOptions w = base;
      if (model) w.bunit = "JY/PIXEL";
      io::write_fits_cube(staged.stage(path), in.layout, cube.data(), in.layout.header,
                          model ? std::vector<io::CubeBeam>{} : beams, w);
    };
    if (!o.residual.empty()) write(o.residual, &PlaneView::residual, false);
    if (!o.model.empty()) write(o.model, &PlaneView::model, true);
    write(o.output, &PlaneView::restored, false);
  }
  nlohmann::json summary = summary_json(o, in, run, views, std::chrono::duration<double>(Clock::now() - t0).count());
  const std::string text = summary.dump(2) + "\n";
  if (!o.json.empty() && o.json != "-") io::write_text_file(staged.stage(o.json), text, true);
  staged.commit();
  if (o.json == "-") std::cout << text << std::flush;
  return summary;
}

}  // namespace gpuclean::app

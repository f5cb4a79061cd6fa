#include "app/image/clean_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "app/image/clean_groups.hpp"
#include "app/image/clean_summary.hpp"
#include "app/image/image_outputs.hpp"
#include "app/image/major_cycles.hpp"
#include "app/image/model_data.hpp"
#include "app/image/psf_beam.hpp"
#include "app/image/source_list.hpp"
#include "app/image/vis_store_imager.hpp"
#include "clean/beam.hpp"
#include "clean/image_stats.hpp"
#include "clean/outer_loop.hpp"
#include "clean/restore.hpp"
#include "imaging/image_run.hpp"
#include "io/fits_reader.hpp"
#include "io/text_writer.hpp"

namespace gpuclean::app {
namespace {

std::vector<double> to_double(const clean::HostImage& image) {
  return std::vector<double>(image.pixels.begin(), image.pixels.end());
}

clean::HostImage to_host(const std::vector<double>& pixels, const imaging::ImageGeometry& g) {
  clean::HostImage image(g.width, g.height);
  for (std::size_t i = 0; i < pixels.size(); ++i) image.pixels[i] = static_cast<float>(pixels[i]);
  return image;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The beam written in the header (fitted to `c.psf` as write_image_outputs fits it), in pixels
/// and on the sky.
struct RestoringBeam {
  clean::PixelGaussian pixels;
  clean::SkyBeam sky;
};

RestoringBeam restoring_beam(const ImageOptions& o, const imaging::ChannelImage& c) {
  const io::BeamKeywords b = fit_wsclean_beam(
      c.psf, o.run.image, initial_beam_estimate(c, o.run.image, o.run.weighting.gaussian_taper_fwhm_rad));
  clean::PixelToSky t;
  const double delta_deg = o.run.image.scale * 180 / M_PI;
  t.m[0][0] = -delta_deg, t.m[1][1] = delta_deg;  // as psf_beam.cpp: CDELT1 = −δ
  t.m[0][1] = t.m[1][0] = 0;
  const clean::SkyBeam sky{b.bmaj_deg * 3600, b.bmin_deg * 3600, b.bpa_deg};
  return {clean::from_sky(sky, t), sky};
}

/// image = model ⊛ the restoring beam + residual, as WSClean restores.
std::vector<double> restored(const ImageOptions& o, const RestoringBeam& beam, const std::vector<double>& model,
                             const std::vector<double>& residual) {
  return to_double(
      clean::restore_cpu(to_host(model, o.run.image), to_host(residual, o.run.image), beam.pixels, o.run.threads));
}

/// An output channel's plane of the JSON summary; `run`: its group's index.
ImagePlaneSummary plane_summary(std::size_t index, std::size_t run, const imaging::ChannelImage& c,
                                const CleanImages& images, const RestoringBeam& beam) {
  const std::vector<float> residual(images.residual.begin(), images.residual.end()),
      model(images.model.begin(), images.model.end()), image(images.image.begin(), images.image.end());
  ImagePlaneSummary p;
  p.plane = {index,       run,      clean::rms(residual), clean::total_flux(model), clean::positive_peak(image),
             beam.pixels, beam.sky, true};
  p.frequency_hz = (c.band_start_hz + c.band_end_hz) / 2;
  p.weight = c.imgwg;
  return p;
}

}  // namespace

void run_clean(const ImageOptions& o, const std::vector<io::ms::MsMetadata>& metadata,
               const std::vector<io::ms::MsSelection>& selections, const std::string& command_line) {
  const bool joined = o.deconvolution.settings.join_channels;
  if (o.deconvolution.save_source_list)  // WSClean's refusals, before any read (per group of channels)
    check_source_list(o.deconvolution.settings, joined ? o.run.channels_out : 1,
                      o.selection.pol == io::ms::PolRequest::kI);
  ImageCleanSeconds seconds;
  auto stage = std::chrono::steady_clock::now();
  imaging::ImageRunResult result;
  imaging::VisStore store = imaging::make_vis_store(selections, o.run, &result.channels);
  seconds.first_inversion = seconds_since(stage);

  // One session and one loop per group (WSClean 3.1: unjoined channels are cleaned one by one).
  const imaging::ImageGeometry& g = o.run.image;
  const std::size_t n = result.channels.size();
  const std::vector<std::vector<std::size_t>> groups = clean_groups(n, joined);
  std::optional<clean::HostImage> fits_mask;
  if (!o.deconvolution.fits_mask.empty()) {
    const io::FitsImage mask = io::read_fits_image(o.deconvolution.fits_mask);  // size checked by the parser
    fits_mask.emplace(g.width, g.height);
    for (std::size_t i = 0; i < fits_mask->pixels.size(); ++i) fits_mask->pixels[i] = mask.pixels[i] != 0 ? 1.0f : 0.0f;
  }
  std::vector<clean::HostImage> dirty(n), psfs(n), models(n), residuals(n);
  std::vector<ImageCleanRun> runs;
  CleanOutputs outputs;
  std::vector<CleanImages>& clean = outputs.images;
  clean.resize(n);
  for (const std::vector<std::size_t>& group : groups) {
    const std::string who = groups.size() > 1 ? "channel " + std::to_string(group.front()) + ": " : "";
    stage = std::chrono::steady_clock::now();
    VisStoreImager imager(store, group);
    const std::vector<clean::HostImage> group_dirty = imager.dirty(), group_psfs = imager.psfs();
    seconds.first_inversion += seconds_since(stage);

    clean::OuterLoopInput input;
    input.width = g.width, input.height = g.height, input.channels = group.size();
    input.psfs = group_psfs;
    for (std::size_t c : group) {
      const imaging::ChannelImage& ch = result.channels[c];
      input.frequencies_hz.push_back((ch.band_start_hz + ch.band_end_hz) / 2);
      input.weights.push_back(ch.imgwg);
    }
    input.fits_mask = fits_mask;
    const double beam = group_beam_pixels(result.channels, group, g, o.run.weighting.gaussian_taper_fwhm_rad);
    const clean::CleanSettings settings = group_settings(o, beam);
    if (settings.multiscale.enabled || settings.local_rms.enabled)
      std::printf("gpuclean image: %s%s in WSClean's theoretical beam of %.3f pixels\n", who.c_str(),
                  settings.multiscale.enabled && settings.local_rms.enabled ? "scales and the local-RMS window"
                  : settings.multiscale.enabled                             ? "scales"
                                                                            : "the local-RMS window",
                  beam);
    std::vector<const float*> first;
    for (const clean::HostImage& d : group_dirty) first.push_back(d.pixels.data());
    stage = std::chrono::steady_clock::now();
    clean::OuterLoopSession session(settings, std::move(input), first);
    const MajorCycleSettings loop{o.deconvolution.niter, o.deconvolution.mgain, o.deconvolution.nmiter};
    const auto progress = [&who](const std::string& line) {
      std::printf("gpuclean image: %s%s\n", who.c_str(), line.c_str());
    };
    ImageCleanRun run{group, run_major_cycles(imager, session, loop, progress), session.result(), settings};
    run.result.images = {};  // the components and the ledger are what is kept
    const MajorCycleReport& report = run.report;
    std::printf("gpuclean image: %s%zu major cycle(s), %zu components, %zu prediction(s), stopped: %.*s\n",
                who.c_str(), report.cycles.size(), report.iterations, report.predictions,
                static_cast<int>(to_string(report.stop).size()), to_string(report.stop).data());
    seconds.loop += seconds_since(stage);
    std::vector<clean::HostImage> group_models = session.models(), group_residuals = session.residuals();
    for (std::size_t k = 0; k < group.size(); ++k) {
      const std::size_t c = group[k];
      dirty[c] = group_dirty[k], psfs[c] = group_psfs[k];
      models[c] = std::move(group_models[k]), residuals[c] = std::move(group_residuals[k]);
      clean[c].major_iterations = report.cycles.size();  // WSCMAJOR: WSClean counts its rounds
      clean[c].minor_iterations = report.iterations;
    }
    runs.push_back(std::move(run));
  }

  stage = std::chrono::steady_clock::now();
  std::vector<ImagePlaneSummary> planes;
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (std::size_t c : runs[r].channels) {
      imaging::ChannelImage& ch = result.channels[c];
      ch.dirty = to_double(dirty[c]);
      ch.psf = to_double(psfs[c]);
      clean[c].model = to_double(models[c]);
      clean[c].residual = to_double(residuals[c]);
      const RestoringBeam beam = restoring_beam(o, ch);
      clean[c].image = restored(o, beam, clean[c].model, clean[c].residual);
      planes.push_back(plane_summary(c, r, ch, clean[c], beam));
    }
  if (n > 1) {
    // The MFS as image_run makes it (channel 0's counters, WSCIMGWG the sum); its residual and
    // model are the channels' weighted means and its image restores them with the MFS beam.
    // WSClean 3.1 copies channel 0's header, so its WSCMAJOR/WSCMINOR are channel 0's.
    imaging::ChannelImage mfs = result.channels.front();
    std::vector<const std::vector<double>*> d, p, r, m;
    std::vector<double> weights;
    mfs.imgwg = 0;
    for (std::size_t c = 0; c < n; ++c) {
      const imaging::ChannelImage& ch = result.channels[c];
      d.push_back(&ch.dirty), p.push_back(&ch.psf), r.push_back(&clean[c].residual), m.push_back(&clean[c].model);
      weights.push_back(ch.imgwg);
      mfs.imgwg += ch.imgwg;
      mfs.band_start_hz = std::min(mfs.band_start_hz, ch.band_start_hz);
      mfs.band_end_hz = std::max(mfs.band_end_hz, ch.band_end_hz);
    }
    mfs.channel_begin = 0, mfs.channel_end = selections.front().freq_hz.size();
    mfs.theoretic_beam_rad = result.channels.back().theoretic_beam_rad;
    mfs.dirty = imaging::mfs_mean(d, weights);
    mfs.psf = imaging::mfs_mean(p, weights);
    CleanImages mc{imaging::mfs_mean(r, weights), imaging::mfs_mean(m, weights), {}, clean.front().major_iterations,
                   clean.front().minor_iterations};
    mc.image = restored(o, restoring_beam(o, mfs), mc.model, mc.residual);
    clean.push_back(std::move(mc));
    result.mfs = std::move(mfs);
  }
  seconds.restore = seconds_since(stage);

  // After every FITS file is staged, before any is renamed into place: the source list and the
  // summary's file are staged, then MODEL_DATA written (as WSClean 3.1: only when the loop
  // predicted, i.e. -mgain < 1, and not with -no-update-model-required), then the summary. A
  // failure before MODEL_DATA leaves no output and every MS as it was.
  bool predicted_any = false;
  for (const ImageCleanRun& run : runs) predicted_any |= run.report.predictions > 0;
  const bool model_data = predicted_any && o.deconvolution.update_model_required;
  imaging::PredictRunResult predicted;
  nlohmann::json summary;
  stage = std::chrono::steady_clock::now();
  outputs.before_commit = [&](io::StagedOutputs& staged) {
    if (o.deconvolution.save_source_list) {
      // WSClean 3.1 writes NAME-sources.txt after each group, each over the last: the last
      // group's list is the one left.
      const ImageCleanRun& last = runs.back();
      std::vector<SourceListChannel> channels;
      for (std::size_t c : last.channels) {
        const imaging::ChannelImage& ch = result.channels[c];
        channels.push_back({&clean[c].model, (ch.band_start_hz + ch.band_end_hz) / 2, ch.imgwg});
      }
      const io::ms::MsSelection& sel = selections.front();
      const SourceListSky sky{g.width, g.height, g.scale, sel.ra_rad, sel.dec_rad};
      const std::string text = wsclean_source_list(channels, sky, last.settings, &last.result);
      io::write_text_file(staged.stage(source_list_path(o)), text, true);
    }
    const std::string json_file = o.json.empty() || o.json == "-" ? std::string() : staged.stage(o.json);
    seconds.write = seconds_since(stage);
    if (model_data) {  // every channel's final model, each into its own channels (as WSClean)
      const auto start = std::chrono::steady_clock::now();
      std::vector<std::vector<double>> channel_models;
      for (std::size_t c = 0; c < n; ++c) channel_models.push_back(clean[c].model);
      predicted = write_model_data(o, selections, channel_models);
      seconds.model_data = seconds_since(start);
    }
    if (o.json.empty()) return;
    const ImageCleanRecord record{&o, command_line, &runs, planes, image_output_paths(o), model_data, predicted.rows,
                                  seconds};
    summary = image_summary_json(record);
    if (!json_file.empty()) io::write_text_file(json_file, summary.dump(2) + "\n", true);
  };
  write_image_outputs(o, result, ImageContext{&metadata.front(), &selections.front(), command_line}, &outputs);
  if (model_data)
    std::printf("gpuclean image: MODEL_DATA: the final model predicted into %zu rows of %zu MS, %.3f s\n",
                predicted.rows, o.ms.size(), seconds.model_data);
  else
    std::printf("gpuclean image: MODEL_DATA left as it was (%s)\n",
                o.deconvolution.update_model_required ? "-mgain 1: nothing was predicted, as in WSClean 3.1"
                                                      : "-no-update-model-required");
  if (o.json == "-") std::printf("%s\n", summary.dump(2).c_str());
}

}  // namespace gpuclean::app

#include "app/image/clean_run.hpp"
#include "app/image/image_log.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "app/image/channel_averaging_imager.hpp"
#include "app/image/clean_groups.hpp"
#include "app/image/clean_restore.hpp"
#include "app/image/clean_summary.hpp"
#include "app/image/image_gpus.hpp"
#include "app/image/image_outputs.hpp"
#include "app/image/major_cycles.hpp"
#include "app/image/model_data.hpp"
#include "app/image/source_list.hpp"
#include "app/image/vis_store_imager.hpp"
#include "clean/errors.hpp"
#include "clean/outer_loop.hpp"
#include "clean/parallel_deconvolution.hpp"
#include "imaging/image_run.hpp"
#include "io/fits_reader.hpp"
#include "io/text_writer.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::app {
namespace {

std::vector<double> to_double(const clean::HostImage& image) {
  return std::vector<double>(image.pixels.begin(), image.pixels.end());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::optional<clean::HostImage> read_fits_mask(const ImageOptions& o) {
  if (o.deconvolution.fits_mask.empty()) return std::nullopt;
  const io::FitsImage mask = io::read_fits_image(o.deconvolution.fits_mask);  // size checked by the parser
  clean::HostImage m(o.run.image.width, o.run.image.height);
  for (std::size_t i = 0; i < m.pixels.size(); ++i) m.pixels[i] = mask.pixels[i] != 0 ? 1.0f : 0.0f;
  return m;
}

/// One group's images at the end: per output channel of the group, in its order.
struct GroupImages {
  std::vector<clean::HostImage> dirty, psfs, models, residuals;
  std::vector<clean::HostImage> first_residuals;  ///< -save-first-residual
};

/// Cleans one group of output channels: its session over its channels, or over M averaged planes
/// with -deconvolution-channels M (ChannelAveragingImager), and WSClean's major cycles. `split_gpus`:
/// the GPUs its joined planes may be split over (OuterLoopInput::gpus; empty: the current one).
GroupImages clean_group(const ImageOptions& o, imaging::VisStore& store, const imaging::ImageRunResult& result,
                        const std::vector<std::size_t>& group, const std::optional<clean::HostImage>& fits_mask,
                        bool several_groups, ImageCleanRun& run, ImageCleanSeconds& seconds,
                        const std::vector<int>& split_gpus = {}) {
  const imaging::ImageGeometry& g = o.run.image;
  const std::string who = several_groups ? "channel " + std::to_string(group.front()) + ": " : "";
  auto stage = std::chrono::steady_clock::now();
  VisStoreImager channels(store, group);
  GroupImages out{channels.dirty(), channels.psfs(), {}, {}, {}};
  std::vector<double> frequencies, weights;
  for (std::size_t c : group) {
    const imaging::ChannelImage& ch = result.channels[c];
    frequencies.push_back((ch.band_start_hz + ch.band_end_hz) / 2);
    weights.push_back(ch.imgwg);
  }
  const double beam = group_beam_pixels(result.channels, group, g, o.run.weighting.gaussian_taper_fwhm_rad);
  const clean::CleanSettings settings = group_settings(o, beam);
  std::optional<ChannelAveragingImager> averaged;
  const std::size_t m = o.deconvolution.deconvolution_channels;
  if (m > 0 && m < group.size())
    averaged.emplace(channels, frequencies, weights, m, o.deconvolution.settings.spectral_fit());
  MajorCycleImager& imager = averaged ? static_cast<MajorCycleImager&>(*averaged) : channels;
  const std::vector<clean::HostImage> first = averaged ? averaged->dirty() : out.dirty;
  seconds.first_inversion += seconds_since(stage);

  clean::OuterLoopInput input;
  input.width = g.width, input.height = g.height;
  input.psfs = averaged ? averaged->psfs() : out.psfs;
  input.channels = input.psfs.size();
  input.frequencies_hz = averaged ? averaged->frequencies_hz() : frequencies;
  input.weights = averaged ? averaged->weights() : weights;
  input.fits_mask = fits_mask;
  input.gpus = split_gpus;
  if (settings.multiscale.enabled || settings.local_rms.enabled)
    image_log::info("gpuclean image: %s%s in WSClean's theoretical beam of %.3f pixels\n", who.c_str(),
                settings.multiscale.enabled && settings.local_rms.enabled ? "scales and the local-RMS window"
                : settings.multiscale.enabled                             ? "scales"
                                                                          : "the local-RMS window",
                beam);
  if (averaged)
    image_log::info("gpuclean image: %sdeconvolving %zu channels averaged from %zu\n", who.c_str(), averaged->planes(),
                group.size());
  std::vector<const float*> first_pixels;
  for (const clean::HostImage& d : first) first_pixels.push_back(d.pixels.data());

  stage = std::chrono::steady_clock::now();
  // -parallel-deconvolution N: WSClean's sub-images when the image is larger than N (WSClean 3.1's
  // count, ceil(size / N) a side); else one session over the whole image.
  std::unique_ptr<clean::RoundEngine> engine;
  const std::size_t n_max = o.deconvolution.parallel_deconvolution;
  if (n_max > 0 && (g.width > n_max || g.height > n_max)) {
    auto parallel = std::make_unique<clean::ParallelDeconvolution>(settings, input, first_pixels, n_max);
    image_log::info("gpuclean image: %s-parallel-deconvolution %zu: %zu sub-images, each cleaned on its own with "
                    "-niter %zu", who.c_str(), n_max, parallel->sub_images(), o.deconvolution.niter);
    engine = std::move(parallel);
  } else {
    auto session = std::make_unique<clean::OuterLoopSession>(settings, std::move(input), first_pixels);
    if (!session->plan().split_gpus.empty())
      image_log::info("gpuclean image: %sthe joined planes split over GPUs %s\n", who.c_str(),
                      gpu_list_text(session->plan().split_gpus).c_str());
    engine = std::move(session);
  }
  clean::RoundEngine& session = *engine;
  MajorCycleSettings loop;
  loop.niter = o.deconvolution.niter, loop.mgain = o.deconvolution.mgain, loop.nmiter = o.deconvolution.nmiter;
  loop.mgain_boosting = o.deconvolution.mgain_boosting;
  loop.auto_mask_nmiter = o.deconvolution.auto_mask_nmiter;
  loop.mode = o.deconvolution.major_iteration_mode;
  loop.auto_masking = settings.auto_mask > 0 || settings.auto_mask_absolute > 0;
  loop.skip_final_iteration = o.deconvolution.skip_final_iteration;
  loop.local_rms = settings.local_rms.enabled;
  loop.keep_first_residual = o.deconvolution.save_first_residual && !averaged;
  const auto progress = [&who](const std::string& line) { image_log::info("gpuclean image: %s%s\n", who.c_str(), line.c_str()); };
  run = ImageCleanRun{group, run_major_cycles(imager, session, loop, progress), session.result(), settings, {}, {}};
  run.result.images = {};  // the components and the ledger are what is kept
  const MajorCycleReport& report = run.report;
  image_log::info("gpuclean image: %s%zu major cycle(s), %zu components, %zu prediction(s), stopped: %.*s\n", who.c_str(),
              report.cycles.size(), report.iterations, report.predictions,
              static_cast<int>(to_string(report.stop).size()), to_string(report.stop).data());
  seconds.loop += seconds_since(stage);
  out.models = session.models(), out.residuals = session.residuals();
  out.first_residuals = std::move(run.report.first_residuals);
  if (o.deconvolution.save_source_list && settings.multiscale.enabled) {
    // Multiscale's list is made of the components (a line per pixel and scale), which a session
    // gives at its end; only then, since its end takes the images off the GPU once more.
    session.finish();
    run.result = session.result();
    run.result.images = {};
    if (averaged) run.plane_frequencies_hz = averaged->frequencies_hz(), run.plane_weights = averaged->weights();
  }
  if (averaged) {  // the N imaging channels' models and residuals, as WSClean writes them
    ChannelAveragingImager::ChannelImages per_channel = averaged->channel_outputs(out.models, out.residuals);
    out.models = std::move(per_channel.models), out.residuals = std::move(per_channel.residuals);
  }
  return out;
}

/// Cleans every group (clean_group): in order on this thread when the store has one lane; else
/// one thread per lane (GPU), each cleaning the groups whose first channel it holds, in order,
/// with its session on that GPU. The stages' seconds are then the slowest lane's.
std::vector<GroupImages> clean_groups_on_lanes(const ImageOptions& o, imaging::VisStore& store,
                                               const imaging::ImageRunResult& result,
                                               const std::vector<std::vector<std::size_t>>& groups,
                                               const std::optional<clean::HostImage>& fits_mask,
                                               std::vector<ImageCleanRun>& runs, ImageCleanSeconds& seconds) {
  std::vector<GroupImages> images(groups.size());
  std::map<std::size_t, std::vector<std::size_t>> by_lane;
  if (store.lanes() > 1)
    for (std::size_t r = 0; r < groups.size(); ++r) by_lane[store.lane_of(groups[r].front())].push_back(r);
  if (by_lane.size() <= 1) {
    // On this thread, on the first GPU; over several GPUs a joined group may be split over all of
    // them when it does not fit one (clean/run_plan.hpp), led from the first.
    std::vector<int> split_gpus;
    if (o.run.device == clean::Device::kGpu && o.run.gpus.size() > 1) {
      cuda::set_device(o.run.gpus.front());
      split_gpus = o.run.gpus;
    }
    for (std::size_t r = 0; r < groups.size(); ++r)
      images[r] =
          clean_group(o, store, result, groups[r], fits_mask, groups.size() > 1, runs[r], seconds, split_gpus);
    return images;
  }
  std::vector<ImageCleanSeconds> lane_seconds(by_lane.size());
  std::vector<std::exception_ptr> errors(by_lane.size());
  std::vector<std::thread> threads;
  std::size_t t = 0;
  for (const auto& [lane, rs] : by_lane) {
    threads.emplace_back([&, lane = lane, &rs = rs, t] {
      try {
        cuda::set_device(store.lane_gpu(lane));  // the group's session runs on its channels' GPU
        for (std::size_t r : rs)
          images[r] = clean_group(o, store, result, groups[r], fits_mask, true, runs[r], lane_seconds[t]);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
    ++t;
  }
  for (std::thread& th : threads) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  double first = 0, loop = 0;
  for (const ImageCleanSeconds& s : lane_seconds)
    first = std::max(first, s.first_inversion), loop = std::max(loop, s.loop);
  seconds.first_inversion += first, seconds.loop += loop;
  return images;
}


/// One polarization's run (o.selection.pol): cleaned, restored, its model being predicted into
/// MODEL_DATA's journal in the background; its files are staged by stage_pol_outputs.
struct PolClean {
  ImageOptions o;
  std::vector<io::ms::MsSelection> selections;
  imaging::ImageRunResult result;
  CleanOutputs outputs;
  std::vector<ImageCleanRun> runs;
  std::vector<ImagePlaneSummary> planes;
  std::optional<ModelDataUpdate> model_data;  ///< -mgain < 1 and the loop predicted
  ImageCleanSeconds seconds;
};

void clean_pol(PolClean& p) {
  const ImageOptions& o = p.o;
  const bool joined = o.deconvolution.settings.join_channels;
  ImageCleanSeconds& seconds = p.seconds;
  auto stage = std::chrono::steady_clock::now();
  imaging::ImageRunResult& result = p.result;
  auto store = std::make_unique<imaging::VisStore>(imaging::make_vis_store(p.selections, o.run, &result.channels));
  seconds.first_inversion = seconds_since(stage);
  image_log::info("gpuclean image: visibilities %s\n", store->describe().c_str());
  // MODEL_DATA (WSClean 3.1: only when the loop predicts, -mgain < 1, and not with
  // -no-update-model-required): its rows are read while the major cycles run.
  std::optional<ModelDataUpdate>& model_data = p.model_data;
  if (o.deconvolution.mgain < 1 && o.deconvolution.update_model_required) model_data.emplace(o, p.selections);

  // One session and one loop per group (WSClean 3.1: unjoined channels are cleaned one by one).
  const std::size_t n = result.channels.size();
  const std::vector<std::vector<std::size_t>> groups = clean_groups(n, joined);
  const std::optional<clean::HostImage> fits_mask = read_fits_mask(o);
  std::vector<ImageCleanRun>& runs = p.runs;
  runs.resize(groups.size());
  std::vector<std::size_t> run_of_channel(n);
  std::vector<CleanImages>& clean = p.outputs.images;
  clean.resize(n);
  std::vector<GroupImages> group_images = clean_groups_on_lanes(o, *store, result, groups, fits_mask, runs, seconds);
  for (std::size_t r = 0; r < groups.size(); ++r) {
    const GroupImages& images = group_images[r];
    for (std::size_t k = 0; k < groups[r].size(); ++k) {
      const std::size_t c = groups[r][k];
      run_of_channel[c] = r;
      result.channels[c].dirty = to_double(images.dirty[k]);
      result.channels[c].psf = to_double(images.psfs[k]);
      clean[c].model = to_double(images.models[k]);
      clean[c].residual = to_double(images.residuals[k]);
      if (k < images.first_residuals.size()) clean[c].first_residual = to_double(images.first_residuals[k]);
      clean[c].major_iterations = runs[r].report.cycles.size();  // WSCMAJOR: WSClean counts its rounds
      clean[c].minor_iterations = runs[r].report.iterations;
    }
  }
  store.reset();  // the device's samples are not needed any more
  bool predicted_any = false;
  for (const ImageCleanRun& run : runs) predicted_any |= run.report.predictions > 0;
  if (model_data && predicted_any) {  // every channel's final model, each into its own channels
    std::vector<std::vector<double>> channel_models;
    for (std::size_t c = 0; c < n; ++c) channel_models.push_back(clean[c].model);
    model_data->predict(std::move(channel_models));  // in the background, while restoring
  } else {
    model_data.reset();  // nothing predicted: MODEL_DATA stays as it was (WSClean 3.1)
  }

  stage = std::chrono::steady_clock::now();
  p.planes = restore_clean_images(o, result, p.outputs, run_of_channel, p.selections.front().freq_hz.size());
  seconds.restore = seconds_since(stage);
}

}  // namespace

void run_clean(const ImageOptions& o, const std::vector<io::ms::MsMetadata>& metadata,
               const std::vector<io::ms::MsSelection>& selections, const std::string& command_line) {
  const bool joined = o.deconvolution.settings.join_channels;
  if (o.deconvolution.save_source_list) {  // WSClean's refusals, before any read (per group of channels)
    check_source_list(o.deconvolution.settings, joined ? o.run.channels_out : 1,
                      o.pols.size() == 1 && o.pols.front() == io::ms::PolRequest::kI);
  }
  // Each polarization on its own, in WSClean's set order (-join-polarizations is not taken yet).
  std::vector<std::unique_ptr<PolClean>> pols;
  for (const io::ms::PolRequest pol : o.pols) {
    auto p = std::make_unique<PolClean>();
    p->o = o;
    p->o.selection.pol = pol;
    p->selections = pol == o.selection.pol ? selections : io::ms::select_visibilities(metadata, p->o.selection);
    if (o.pols.size() > 1) image_log::info("gpuclean image: polarization %s\n", io::ms::pol_name(pol).c_str());
    clean_pol(*p);
    pols.push_back(std::move(p));
  }
  PolClean& first = *pols.front();

  // Every polarization's FITS files staged; then the source list and the summary's file, then
  // MODEL_DATA's journals (in set order: each polarization writes into what the previous left),
  // then the summary. The commit then applies the journals and renames the files; a failure or a
  // stop before it leaves no output and every MS as it was (io/staged_outputs.hpp).
  io::StagedOutputs staged(true);
  for (const auto& p : pols)
    write_image_outputs(p->o, p->result, ImageContext{&metadata.front(), &p->selections.front(), command_line},
                        &p->outputs, &staged);
  auto stage = std::chrono::steady_clock::now();
  ImageCleanSeconds& seconds = first.seconds;
  if (o.deconvolution.save_source_list) {
    // WSClean 3.1 writes NAME-sources.txt after each group, each over the last: the last
    // group's list is the one left.
    const ImageCleanRun& last = first.runs.back();
    std::vector<SourceListChannel> channels;
    for (std::size_t c : last.channels) {
      const imaging::ChannelImage& ch = first.result.channels[c];
      channels.push_back({&first.outputs.images[c].model, (ch.band_start_hz + ch.band_end_hz) / 2, ch.imgwg});
    }
    const io::ms::MsSelection& sel = selections.front();
    const SourceListSky sky{o.run.image.width, o.run.image.height, o.run.image.scale, sel.ra_rad, sel.dec_rad};
    const SourceListPlanes cleaned{last.plane_frequencies_hz, last.plane_weights};
    const std::string text = wsclean_source_list(channels, sky, last.settings, &last.result,
                                                 cleaned.frequencies_hz.empty() ? nullptr : &cleaned);
    io::write_text_file(staged.stage(source_list_path(o)), text, true);
  }
  const std::string json_file = o.json.empty() || o.json == "-" ? std::string() : staged.stage(o.json);
  seconds.write = seconds_since(stage);
  bool write_model_data = false;
  imaging::PredictRunResult predicted;
  const auto journal_start = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < pols.size(); ++k) {
    if (!pols[k]->model_data) continue;
    const imaging::PredictRunResult r =
        pols[k]->model_data->stage(staged, std::filesystem::path(o.name).parent_path().string(), write_model_data);
    if (!write_model_data) predicted = r;
    write_model_data = true;
  }
  seconds.model_data = seconds_since(journal_start);
  nlohmann::json summary;
  if (!o.json.empty()) {
    const ImageCleanRecord record{&first.o, command_line, &first.runs, first.planes, image_output_paths(o),
                                  write_model_data, predicted.rows, seconds};
    summary = image_summary_json(record);
    if (!json_file.empty()) io::write_text_file(json_file, summary.dump(2) + "\n", true);
  }
  const auto staged_at = std::chrono::steady_clock::now();
  staged.commit();
  const double commit_s = seconds_since(staged_at);  // files synced, journals applied, renames
  if (write_model_data)
    image_log::info("gpuclean image: %s: the final model predicted into %zu rows of %zu MS (%.3f s after the images "
                    "to its journal; %.3f s to commit it with the files)\n",
                    o.selection.model_column.c_str(), predicted.rows, o.ms.size(), seconds.model_data, commit_s);
  else
    image_log::info("gpuclean image: %s left as it was (%s)\n", o.selection.model_column.c_str(),
                    o.deconvolution.update_model_required ? "-mgain 1: nothing was predicted, as in WSClean 3.1"
                                                          : "-no-update-model-required");
  if (o.json == "-") std::printf("%s\n", summary.dump(2).c_str());
}

}  // namespace gpuclean::app

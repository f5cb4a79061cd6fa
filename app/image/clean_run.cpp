#include "app/image/clean_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "app/image/image_outputs.hpp"
#include "app/image/major_cycles.hpp"
#include "app/image/psf_beam.hpp"
#include "app/image/vis_store_imager.hpp"
#include "clean/beam.hpp"
#include "clean/outer_loop.hpp"
#include "clean/restore.hpp"
#include "imaging/image_run.hpp"
#include "io/fits_reader.hpp"

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

/// image = model ⊛ the beam written in the header (fitted to `c.psf` as write_image_outputs fits
/// it) + residual, as WSClean restores.
std::vector<double> restored(const ImageOptions& o, const imaging::ChannelImage& c, const std::vector<double>& model,
                             const std::vector<double>& residual) {
  const io::BeamKeywords b = fit_wsclean_beam(
      c.psf, o.run.image, initial_beam_estimate(c, o.run.image, o.run.weighting.gaussian_taper_fwhm_rad));
  clean::PixelToSky t;
  const double delta_deg = o.run.image.scale * 180 / M_PI;
  t.m[0][0] = -delta_deg, t.m[1][1] = delta_deg;  // as psf_beam.cpp: CDELT1 = −δ
  t.m[0][1] = t.m[1][0] = 0;
  const clean::PixelGaussian beam = clean::from_sky({b.bmaj_deg * 3600, b.bmin_deg * 3600, b.bpa_deg}, t);
  return to_double(
      clean::restore_cpu(to_host(model, o.run.image), to_host(residual, o.run.image), beam, o.run.threads));
}

}  // namespace

void run_clean(const ImageOptions& o, const std::vector<io::ms::MsMetadata>& metadata,
               const std::vector<io::ms::MsSelection>& selections, const std::string& command_line) {
  imaging::ImageRunResult result;
  imaging::VisStore store = imaging::make_vis_store(selections, o.run, &result.channels);
  VisStoreImager imager(store);
  const std::vector<clean::HostImage> dirty = imager.dirty(), psfs = imager.psfs();

  const imaging::ImageGeometry& g = o.run.image;
  clean::OuterLoopInput input;
  input.width = g.width, input.height = g.height, input.channels = result.channels.size();
  input.psfs = psfs;
  for (const imaging::ChannelImage& c : result.channels) {
    input.frequencies_hz.push_back((c.band_start_hz + c.band_end_hz) / 2);
    input.weights.push_back(c.imgwg);
  }
  if (!o.deconvolution.fits_mask.empty()) {
    const io::FitsImage mask = io::read_fits_image(o.deconvolution.fits_mask);  // size checked by the parser
    input.fits_mask.emplace(g.width, g.height);
    for (std::size_t i = 0; i < input.fits_mask->pixels.size(); ++i)
      input.fits_mask->pixels[i] = mask.pixels[i] != 0 ? 1.0f : 0.0f;
  }
  clean::CleanSettings settings = o.deconvolution.settings;  // settings.mgain stays 1: the round gain is -mgain
  if (o.device == clean::Device::kCpu) settings.device = clean::Device::kCpu;
  std::vector<const float*> first;
  for (const clean::HostImage& d : dirty) first.push_back(d.pixels.data());
  clean::OuterLoopSession session(settings, std::move(input), first);

  const MajorCycleReport report = run_major_cycles(
      imager, session, MajorCycleSettings{o.deconvolution.niter, o.deconvolution.mgain, o.deconvolution.nmiter},
      [](const std::string& line) { std::printf("gpuclean image: %s\n", line.c_str()); });
  std::printf("gpuclean image: %zu major cycle(s), %zu components, %zu prediction(s), stopped: %.*s\n",
              report.cycles.size(), report.iterations, report.predictions,
              static_cast<int>(to_string(report.stop).size()), to_string(report.stop).data());

  const std::vector<clean::HostImage> models = session.models(), residuals = session.residuals();
  std::vector<CleanImages> clean(result.channels.size());
  for (std::size_t c = 0; c < result.channels.size(); ++c) {
    imaging::ChannelImage& ch = result.channels[c];
    ch.dirty = to_double(dirty[c]);
    ch.psf = to_double(psfs[c]);
    clean[c].model = to_double(models[c]);
    clean[c].residual = to_double(residuals[c]);
    clean[c].image = restored(o, ch, clean[c].model, clean[c].residual);
  }
  if (result.channels.size() > 1) {
    // The MFS as image_run makes it (channel 0's counters, WSCIMGWG the sum); its residual and
    // model are the channels' weighted means and its image restores them with the MFS beam.
    imaging::ChannelImage mfs = result.channels.front();
    std::vector<const std::vector<double>*> d, p, r, m;
    std::vector<double> weights;
    mfs.imgwg = 0;
    for (std::size_t c = 0; c < result.channels.size(); ++c) {
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
    CleanImages mc{imaging::mfs_mean(r, weights), imaging::mfs_mean(m, weights), {}};
    mc.image = restored(o, mfs, mc.model, mc.residual);
    clean.push_back(std::move(mc));
    result.mfs = std::move(mfs);
  }
  write_image_outputs(o, result, ImageContext{&metadata.front(), &selections.front(), command_line}, &clean);
}

}  // namespace gpuclean::app

#include "app/image/clean_restore.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <optional>
#include <thread>

#include "app/image/psf_beam.hpp"
#include "clean/beam.hpp"
#include "clean/image_stats.hpp"
#include "clean/restore.hpp"

namespace gpuclean::app {
namespace {

clean::HostImage to_host(const std::vector<double>& pixels, const imaging::ImageGeometry& g) {
  clean::HostImage image(g.width, g.height);
  for (std::size_t i = 0; i < pixels.size(); ++i) image.pixels[i] = static_cast<float>(pixels[i]);
  return image;
}

struct RestoringBeam {
  io::BeamKeywords keywords;
  clean::PixelGaussian pixels;
  clean::SkyBeam sky;
};

RestoringBeam restoring_beam(const ImageOptions& o, const imaging::ChannelImage& c) {
  const io::BeamKeywords b = channel_beam(o, c);
  clean::PixelToSky t;
  const double delta_deg = o.run.image.scale * 180 / M_PI;
  t.m[0][0] = -delta_deg, t.m[1][1] = delta_deg;  // as psf_beam.cpp: CDELT1 = −δ
  t.m[0][1] = t.m[1][0] = 0;
  const clean::SkyBeam sky{b.bmaj_deg * 3600, b.bmin_deg * 3600, b.bpa_deg};
  return {b, clean::from_sky(sky, t), sky};
}

/// Restores `images` (its model and residual given) with `c`'s beam; returns its summary plane.
ImagePlaneSummary restore_one(const ImageOptions& o, const imaging::ChannelImage& c, std::size_t index,
                              std::size_t run, CleanImages& images, int threads) {
  const RestoringBeam beam = restoring_beam(o, c);
  const clean::HostImage model = to_host(images.model, o.run.image);
  const clean::HostImage residual = to_host(images.residual, o.run.image);
  const clean::HostImage image = clean::restore_cpu(model, residual, beam.pixels, threads);
  images.image.assign(image.pixels.begin(), image.pixels.end());
  images.beam = beam.keywords;
  ImagePlaneSummary p;
  p.plane = {index,       run,      clean::rms(residual.pixels), clean::total_flux(model.pixels),
             clean::positive_peak(image.pixels), beam.pixels, beam.sky, true};
  p.frequency_hz = (c.band_start_hz + c.band_end_hz) / 2;
  p.weight = c.imgwg;
  return p;
}

}  // namespace

std::vector<ImagePlaneSummary> restore_clean_images(const ImageOptions& o, imaging::ImageRunResult& result,
                                                    CleanOutputs& outputs, const std::vector<std::size_t>& run_of_channel,
                                                    std::size_t selected_channels) {
  const std::size_t n = result.channels.size();
  std::vector<CleanImages>& clean = outputs.images;
  // The MFS (image_run's: channel 0's counters, WSCIMGWG the sum) is restored beside the channels.
  std::optional<imaging::ChannelImage> mfs;
  if (n > 1) {
    mfs = result.channels.front();
    std::vector<const std::vector<double>*> d, p, r, m;
    std::vector<double> weights;
    mfs->imgwg = 0;
    for (std::size_t c = 0; c < n; ++c) {
      const imaging::ChannelImage& ch = result.channels[c];
      d.push_back(&ch.dirty), p.push_back(&ch.psf), r.push_back(&clean[c].residual), m.push_back(&clean[c].model);
      weights.push_back(ch.imgwg);
      mfs->imgwg += ch.imgwg;
      mfs->band_start_hz = std::min(mfs->band_start_hz, ch.band_start_hz);
      mfs->band_end_hz = std::max(mfs->band_end_hz, ch.band_end_hz);
    }
    mfs->channel_begin = 0, mfs->channel_end = selected_channels;
    mfs->theoretic_beam_rad = result.channels.back().theoretic_beam_rad;
    mfs->dirty = imaging::mfs_mean(d, weights);
    mfs->psf = imaging::mfs_mean(p, weights);
    CleanImages mfs_images;
    mfs_images.residual = imaging::mfs_mean(r, weights);
    mfs_images.model = imaging::mfs_mean(m, weights);
    mfs_images.major_iterations = clean.front().major_iterations;
    mfs_images.minor_iterations = clean.front().minor_iterations;
    clean.push_back(std::move(mfs_images));
  }
  const std::size_t jobs = n + (mfs ? 1 : 0);
  const int all = o.run.threads > 0 ? o.run.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int each = std::max(1, all / static_cast<int>(jobs));
  std::vector<std::future<ImagePlaneSummary>> done;
  for (std::size_t c = 0; c < n; ++c)
    done.push_back(std::async(std::launch::async, [&, c] {
      return restore_one(o, result.channels[c], c, run_of_channel[c], clean[c], each);
    }));
  if (mfs) restore_one(o, *mfs, n, 0, clean.back(), each);  // its plane is not a channel's
  std::vector<ImagePlaneSummary> planes;
  for (auto& f : done) planes.push_back(f.get());
  if (mfs) result.mfs = std::move(*mfs);
  return planes;
}

}  // namespace gpuclean::app

#include "clean/mfs.hpp"

#include "clean/restore.hpp"

namespace gpuclean::clean {

HostImage weighted_mean(const std::vector<CleanPlane>& channels, const std::vector<const HostImage*>& images) {
  const HostImage& first = *images.front();
  const std::size_t n = first.size();
  std::vector<double> acc(n, 0.0);
  double total = 0.0;
  for (const CleanPlane& c : channels) total += c.weight;
  for (std::size_t c = 0; c < channels.size(); ++c) {
    const double w = channels[c].weight / total;
    for (std::size_t i = 0; i < n; ++i) acc[i] += w * images[c]->pixels[i];
  }
  HostImage out(first.width, first.height);
  for (std::size_t i = 0; i < n; ++i) out.pixels[i] = static_cast<float>(acc[i]);
  return out;
}

MfsImages mfs_images(const std::vector<CleanPlane>& channels, const std::vector<const HostImage*>& residuals,
                     const std::vector<const HostImage*>& models, const PixelGaussian* beam, BeamFit fit,
                     int threads) {
  MfsImages out;
  out.residual = weighted_mean(channels, residuals);
  out.model = weighted_mean(channels, models);
  if (beam) {
    out.beam = *beam;
  } else {
    JoinedPlanes mean;
    mean.planes = channels;
    out.beam = fit_psf_beam(integrated_psf(mean), fit);
  }
  out.restored = restore_cpu(out.model, out.residual, out.beam, threads);
  return out;
}

}  // namespace gpuclean::clean

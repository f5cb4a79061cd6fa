#include "clean/plane_set.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <set>

#include "clean/deconvolver.hpp"
#include "clean/errors.hpp"

namespace gpuclean::clean {

std::string_view to_string(Join j) { return j == Join::kChannels ? "channels" : "polarizations"; }

std::vector<float> integration_weights(const JoinedPlanes& planes) {
  std::vector<float> w(planes.planes.size(), 1.0f);
  if (planes.join == Join::kPolarizations) {
    std::fill(w.begin(), w.end(), static_cast<float>(planes.polarization_factor));
    return w;
  }
  double total = 0.0;
  for (const CleanPlane& p : planes.planes) total += p.weight;
  if (!(total > 0.0)) throw InvalidInput("the channels' weights add up to zero; give channels with data.");
  for (std::size_t c = 0; c < w.size(); ++c) w[c] = static_cast<float>(planes.planes[c].weight / total);
  return w;
}

double polarization_factor(const std::vector<std::string>& pols) {
  const std::set<std::string> set(pols.begin(), pols.end());
  const auto is = [&](std::initializer_list<const char*> names) {
    return set.size() == names.size() && std::all_of(names.begin(), names.end(), [&](const char* n) { return set.count(n); });
  };
  const bool correlations =
      is({"XX", "YY"}) || is({"RR", "LL"}) || is({"XX", "XY", "YX", "YY"}) || is({"RR", "RL", "LR", "LL"});
  return correlations ? 0.5 : 1.0;
}

HostImage integrate_images(Join join, const std::vector<const HostImage*>& images, const std::vector<float>& w) {
  const HostImage& first = *images.front();
  HostImage out(first.width, first.height);
  std::vector<float> v(images.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    bool nan = false;
    for (std::size_t c = 0; c < images.size(); ++c) {
      v[c] = images[c]->pixels[i];
      nan = nan || std::isnan(v[c]);
    }
    out.pixels[i] = nan ? std::numeric_limits<float>::quiet_NaN() : integrate(join, v.data(), 1, w);
  }
  return out;
}

PreparedPsf integrated_psf(const JoinedPlanes& planes) {
  const PreparedPsf& first = *planes.planes.front().psf;
  std::vector<double> w(planes.planes.size(), 1.0);
  double total = 0.0;
  for (std::size_t c = 0; c < w.size(); ++c) {
    if (planes.join == Join::kChannels) w[c] = planes.planes[c].weight;
    total += w[c];
  }
  PreparedPsf out{HostImage(first.image.width, first.image.height), first.peak_x, first.peak_y, 1.0f};
  std::vector<double> sum(out.image.size(), 0.0);
  for (std::size_t c = 0; c < w.size(); ++c) {
    const PreparedPsf& p = *planes.planes[c].psf;
    if (p.image.width != first.image.width || p.image.height != first.image.height || p.peak_x != first.peak_x ||
        p.peak_y != first.peak_y)
      throw InvalidInput("the planes' PSFs differ in size or peak position; give PSFs made on one grid.");
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += w[c] / total * p.image.pixels[i];
  }
  const double peak = sum[first.peak_y * first.image.width + first.peak_x];
  if (!(peak > 0.0)) throw InvalidInput("the planes' PSFs add up to nothing at their peak.");
  for (std::size_t i = 0; i < sum.size(); ++i) out.image.pixels[i] = static_cast<float>(sum[i] / peak);
  return out;
}

double reference_frequency(const JoinedPlanes& planes) {
  if (planes.reference_frequency_hz > 0.0) return planes.reference_frequency_hz;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const CleanPlane& p : planes.planes) {
    lo = std::min(lo, p.frequency_hz);
    hi = std::max(hi, p.frequency_hz);
  }
  return lo <= hi ? 0.5 * (lo + hi) : 0.0;
}

JoinedProblemImages joined_problem_images(const JoinedPlanes& planes) {
  if (planes.planes.empty()) throw InvalidInput("a joined run needs at least one plane.");
  std::vector<const HostImage*> images;
  for (const CleanPlane& p : planes.planes) images.push_back(p.dirty);
  return {integrate_images(planes.join, images, integration_weights(planes)), integrated_psf(planes)};
}

void check_join_settings(Join join, const CleanSettings& settings) {
  const std::string what = join == Join::kChannels ? "--join-channels" : "--join-polarizations";
  if (settings.algorithm != Algorithm::kClark)
    throw InvalidSettings(what + " runs with Clark only; leave out --algorithm hogbom.");
  // The scale images are made of the integrated image: a channels' weighted mean convolves as its
  // channels do, but the root of a sum of squares does not (radler warns of the same pairing).
  if (settings.multiscale.enabled && join == Join::kPolarizations)
    throw InvalidSettings("--join-polarizations does not run with --multiscale: the scales of the polarized intensity "
                          "are not those of its Stokes planes; clean each polarization on its own, or leave out "
                          "--multiscale.");
}

void check_joinable(const CleanProblem& problem, const CleanSettings& settings) {
  if (!problem.joined) return;
  check_join_settings(problem.joined->join, settings);
  for (const CleanPlane& p : problem.joined->planes) {
    if (p.dirty->width != problem.dirty.width || p.dirty->height != problem.dirty.height)
      throw InvalidInput("the joined planes differ in size; give planes made on one grid.");
  }
}

}  // namespace gpuclean::clean

#include "clean/parallel_deconvolution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "clean/errors.hpp"
#include "clean/image_stats.hpp"

namespace gpuclean::clean {
namespace {

// One seam through a band of the image: position[i] for each line i of `lines`, within [lo, hi)
// across them, of least summed |value| (NaN costs nothing: no emission), each step moving at most
// one pixel sideways. `at(line, across)` reads the image.
template <class At>
std::vector<std::size_t> seam(std::size_t lines, std::size_t lo, std::size_t hi, At at) {
  const std::size_t n = hi - lo;
  std::vector<double> cost(n), next(n);
  std::vector<std::uint8_t> from(lines * n, 1);  // 0: came from -1, 1: straight, 2: from +1
  const auto value = [&](std::size_t line, std::size_t k) {
    const float v = at(line, lo + k);
    return std::isfinite(v) ? std::abs(static_cast<double>(v)) : 0.0;
  };
  for (std::size_t k = 0; k < n; ++k) cost[k] = value(0, k);
  for (std::size_t line = 1; line < lines; ++line) {
    for (std::size_t k = 0; k < n; ++k) {
      std::uint8_t best = 1;
      double c = cost[k];
      if (k > 0 && cost[k - 1] < c) c = cost[k - 1], best = 0;
      if (k + 1 < n && cost[k + 1] < c) c = cost[k + 1], best = 2;
      next[k] = c + value(line, k);
      from[line * n + k] = best;
    }
    std::swap(cost, next);
  }
  std::vector<std::size_t> path(lines);
  std::size_t k = static_cast<std::size_t>(std::min_element(cost.begin(), cost.end()) - cost.begin());
  for (std::size_t line = lines; line-- > 0;) {
    path[line] = lo + k;
    if (line > 0) k = k + from[line * n + k] - 1;
  }
  return path;
}

// The seams between `parts` even parts of `length`, each within a quarter of a part of its place.
template <class At>
std::vector<std::vector<std::size_t>> seams(std::size_t parts, std::size_t length, std::size_t lines, At at) {
  std::vector<std::vector<std::size_t>> out;
  const std::size_t average = length / parts;
  for (std::size_t k = 1; k < parts; ++k) {
    const std::size_t place = length * k / parts;
    const std::size_t lo = place > average / 4 ? place - average / 4 : 0;
    const std::size_t hi = std::min(length, place + average / 4 + 1);
    out.push_back(seam(lines, lo, hi, at));
  }
  return out;
}

std::size_t parts_of(std::size_t length, std::size_t max_size) { return (length + max_size - 1) / max_size; }

}  // namespace

std::vector<SubImage> divide_image(const HostImage& image, std::size_t max_size) {
  if (max_size == 0) throw InvalidSettings("-parallel-deconvolution needs a sub-image size above 0");
  const std::size_t w = image.width, h = image.height;
  const std::size_t columns = parts_of(w, max_size), rows = parts_of(h, max_size);
  // Vertical seams (one x per row), then horizontal ones (one y per column).
  const auto vertical = seams(columns, w, h, [&](std::size_t y, std::size_t x) { return image.at(x, y); });
  const auto horizontal = seams(rows, h, w, [&](std::size_t x, std::size_t y) { return image.at(x, y); });
  std::vector<std::uint32_t> owner(w * h);
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      std::size_t column = 0, row = 0;
      for (const auto& s : vertical) column += x >= s[y];
      for (const auto& s : horizontal) row += y >= s[x];
      owner[y * w + x] = static_cast<std::uint32_t>(row * columns + column);
    }
  std::vector<SubImage> subs(columns * rows);
  std::vector<std::size_t> x0(subs.size(), w), y0(subs.size(), h), x1(subs.size(), 0), y1(subs.size(), 0);
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      const std::uint32_t o = owner[y * w + x];
      x0[o] = std::min(x0[o], x), y0[o] = std::min(y0[o], y), x1[o] = std::max(x1[o], x + 1),
      y1[o] = std::max(y1[o], y + 1);
    }
  for (std::size_t i = 0; i < subs.size(); ++i) {
    SubImage& s = subs[i];
    s.x = x0[i], s.y = y0[i], s.width = x1[i] - x0[i], s.height = y1[i] - y0[i];
    s.area.assign(s.width * s.height, 0);
    for (std::size_t y = s.y; y < s.y + s.height; ++y)
      for (std::size_t x = s.x; x < s.x + s.width; ++x)
        if (owner[y * w + x] == i) s.area[(y - s.y) * s.width + (x - s.x)] = 1;
  }
  return subs;
}

struct ParallelDeconvolution::Sub {
  SubImage box;
  std::unique_ptr<OuterLoopSession> session;
  std::size_t iterations = 0;
};

std::vector<float> ParallelDeconvolution::crop(const float* plane, const SubImage& s) const {
  std::vector<float> out(s.width * s.height);
  for (std::size_t y = 0; y < s.height; ++y)
    std::copy_n(plane + (s.y + y) * width_ + s.x, s.width, out.begin() + static_cast<std::ptrdiff_t>(y * s.width));
  return out;
}

ParallelDeconvolution::ParallelDeconvolution(const CleanSettings& settings, const OuterLoopInput& input,
                                             const std::vector<const float*>& first, std::size_t max_size)
    : width_(input.width), height_(input.height), planes_(input.channels * input.polarizations) {
  if (first.size() != planes_)
    throw InvalidInput("the residual has " + std::to_string(first.size()) + " planes; the run has " +
                       std::to_string(planes_) + ".");
  for (std::size_t p = 0; p < planes_; ++p)
    plane_weights_.push_back(input.weights.empty() ? 1.0 : input.weights[p / input.polarizations]);
  residuals_.resize(planes_, HostImage(width_, height_));
  for (std::size_t p = 0; p < planes_; ++p) std::copy_n(first[p], width_ * height_, residuals_[p].pixels.begin());
  // The seams follow the residual's weighted mean over the planes (WSClean's integrated image).
  division_ = divide_image(integrated(), max_size);
  // Without -auto-mask the automatic threshold is the whole image's (a floor from clean()).
  CleanSettings sub_settings = settings;
  if (settings.auto_mask == 0.0 && settings.auto_mask_absolute == 0.0) {
    auto_threshold_ = settings.auto_threshold;
    sub_settings.auto_threshold = 0.0;
  }
  for (const SubImage& box : division_) {
    OuterLoopInput in;
    in.width = box.width, in.height = box.height;
    in.channels = input.channels, in.polarizations = input.polarizations;
    in.frequencies_hz = input.frequencies_hz, in.weights = input.weights;
    in.polarization_factor = input.polarization_factor;
    in.gpus = input.gpus;
    // Each channel's PSF cut to the box's size about its centre (WSClean's Image::Trim).
    for (const HostImage& psf : input.psfs) {
      HostImage cut(box.width, box.height);
      const std::size_t px = psf.width / 2 - box.width / 2, py = psf.height / 2 - box.height / 2;
      for (std::size_t y = 0; y < box.height; ++y)
        for (std::size_t x = 0; x < box.width; ++x) cut.at(x, y) = psf.at(px + x, py + y);
      in.psfs.push_back(std::move(cut));
    }
    // Only its own area is cleaned (and of it only what the user's mask allows).
    in.fits_mask.emplace(box.width, box.height);
    for (std::size_t y = 0; y < box.height; ++y)
      for (std::size_t x = 0; x < box.width; ++x) {
        const bool user = !input.fits_mask || input.fits_mask->at(box.x + x, box.y + y) != 0.0f;
        in.fits_mask->at(x, y) = box.area[y * box.width + x] && user ? 1.0f : 0.0f;
      }
    std::vector<std::vector<float>> crops;
    std::vector<const float*> pointers;
    for (std::size_t p = 0; p < planes_; ++p) crops.push_back(crop(first[p], box));
    for (const std::vector<float>& c : crops) pointers.push_back(c.data());
    auto sub = std::make_unique<Sub>();
    sub->box = box;
    sub->session = std::make_unique<OuterLoopSession>(sub_settings, std::move(in), pointers);
    subs_.push_back(std::move(sub));
  }
}

ParallelDeconvolution::~ParallelDeconvolution() = default;

HostImage ParallelDeconvolution::integrated() const {
  HostImage out(width_, height_);
  std::vector<double> sum(width_ * height_, 0.0), weight(width_ * height_, 0.0);
  for (std::size_t p = 0; p < planes_; ++p) {
    const double w = plane_weights_[p];
    const std::vector<float>& r = residuals_[p].pixels;
    for (std::size_t i = 0; i < sum.size(); ++i)
      if (std::isfinite(r[i]) && w > 0) sum[i] += w * r[i], weight[i] += w;
  }
  for (std::size_t i = 0; i < sum.size(); ++i)
    out.pixels[i] = weight[i] > 0 ? static_cast<float>(sum[i] / weight[i]) : std::nanf("");
  return out;
}

void ParallelDeconvolution::set_residuals(const std::vector<const float*>& planes) {
  if (planes.size() != planes_)
    throw InvalidInput("the residual has " + std::to_string(planes.size()) + " planes; the run has " +
                       std::to_string(planes_) + ".");
  for (std::size_t p = 0; p < planes_; ++p) std::copy_n(planes[p], width_ * height_, residuals_[p].pixels.begin());
  for (const std::unique_ptr<Sub>& s : subs_) {
    std::vector<std::vector<float>> crops;
    std::vector<const float*> pointers;
    for (std::size_t p = 0; p < planes_; ++p) crops.push_back(crop(planes[p], s->box));
    for (const std::vector<float>& c : crops) pointers.push_back(c.data());
    s->session->set_residuals(pointers);
  }
}

OuterLoopRound ParallelDeconvolution::clean(double floor, double round_gain, std::size_t budget,
                                            const CycleCallback& on_cycle) {
  OuterLoopRound merged;
  // WSClean's first pass finds every sub-image's peak; the brightest sets the floor of all.
  std::vector<float> peaks;
  for (const std::unique_ptr<Sub>& s : subs_) peaks.push_back(s->session->peak());
  merged.peak = *std::max_element(peaks.begin(), peaks.end());
  // -auto-threshold on the whole image's noise, once a round (WSClean's Deconvolution::Perform).
  if (auto_threshold_ > 0.0) {
    const HostImage whole = integrated();
    merged.noise_sigma = robust_sigma(whole.pixels);
    floor = std::max(floor, auto_threshold_ * merged.noise_sigma);
  }
  const double global_floor = std::max(floor, (1.0 - round_gain) * static_cast<double>(merged.peak));
  bool budget_used = false, more = false, mask_started = false;
  for (std::size_t i = 0; i < subs_.size(); ++i) {
    Sub& s = *subs_[i];
    if (s.iterations >= budget) {
      budget_used = true;
      continue;
    }
    // Its own round floor lands on the common one: (1 - gain) x its own peak = the floor. A
    // sub-image already below it makes nothing this round (WSClean: no work, finished).
    if (!(static_cast<double>(peaks[i]) > global_floor)) continue;
    const double gain = round_gain < 1.0 ? 1.0 - global_floor / static_cast<double>(peaks[i]) : 1.0;
    const OuterLoopRound r = s.session->clean(floor, gain, budget - s.iterations, on_cycle);
    s.iterations += r.components;
    merged.components += r.components;
    merged.major_cycles = std::max(merged.major_cycles, r.major_cycles);
    merged.peak_left = std::max(merged.peak_left, r.peak_left);
    merged.key = std::max(merged.key, r.key);
    merged.key_left = std::max(merged.key_left, r.key_left);
    merged.threshold = std::max(merged.threshold, r.threshold);
    merged.noise_sigma = std::max(merged.noise_sigma, r.noise_sigma);
    if (s.iterations >= budget) budget_used = true;
    if (r.reason == StopReason::kThreshold && r.round_floor && r.components > 0) more = true;
    mask_started |= r.auto_mask_started;
    // Its area of the residual, as its session left it.
    const std::vector<HostImage> res = s.session->residuals();
    for (std::size_t p = 0; p < planes_; ++p)
      for (std::size_t y = 0; y < s.box.height; ++y)
        for (std::size_t x = 0; x < s.box.width; ++x)
          if (s.box.area[y * s.box.width + x]) residuals_[p].at(s.box.x + x, s.box.y + y) = res[p].at(x, y);
  }
  for (std::size_t i = 0; i < subs_.size(); ++i)
    if (!(static_cast<double>(peaks[i]) > global_floor)) merged.peak_left = std::max(merged.peak_left, peaks[i]);
  merged.reason = budget_used ? StopReason::kMaxIterations : StopReason::kThreshold;
  merged.round_floor = more && !budget_used;
  merged.auto_mask_started = mask_started;
  return merged;
}

std::vector<HostImage> ParallelDeconvolution::models() {
  std::vector<HostImage> out(planes_, HostImage(width_, height_));
  // Each sub-image's model added whole: a scale's component may reach past its area (WSClean
  // adds the sub-images' models).
  for (const std::unique_ptr<Sub>& s : subs_) {
    const std::vector<HostImage> m = s->session->models();
    for (std::size_t p = 0; p < planes_; ++p)
      for (std::size_t y = 0; y < s->box.height; ++y)
        for (std::size_t x = 0; x < s->box.width; ++x) out[p].at(s->box.x + x, s->box.y + y) += m[p].at(x, y);
  }
  return out;
}

const CleanResult& ParallelDeconvolution::result() const {
  // The sub-images' ledgers summed (a session's components are its own, in its box).
  merged_ = CleanResult();
  for (const std::unique_ptr<Sub>& s : subs_) {
    const CleanResult& r = s->session->result();
    merged_.stop.iterations += r.stop.iterations;
    merged_.stop.major_cycles = std::max(merged_.stop.major_cycles, r.stop.major_cycles);
    merged_.stop.peak_residual = std::max(merged_.stop.peak_residual, r.stop.peak_residual);
    merged_.stop.threshold = std::max(merged_.stop.threshold, r.stop.threshold);
    merged_.stop.noise_sigma = std::max(merged_.stop.noise_sigma, r.stop.noise_sigma);
    if (r.stop.reason == StopReason::kMaxIterations) merged_.stop.reason = StopReason::kMaxIterations;
    merged_.diagnostics.seconds += r.diagnostics.seconds;
    merged_.diagnostics.peak_gpu_bytes += r.diagnostics.peak_gpu_bytes;
  }
  if (!subs_.empty()) merged_.diagnostics = subs_.front()->session->result().diagnostics, merged_.diagnostics.seconds = {};
  for (const std::unique_ptr<Sub>& s : subs_) merged_.diagnostics.seconds += s->session->result().diagnostics.seconds;
  // The components (present after finish()), moved from each sub-image's box to the image.
  CleanResult::Components& all = merged_.components;
  for (const std::unique_ptr<Sub>& s : subs_) {
    const CleanResult::Components& c = s->session->result().components;
    for (Component k : c.list) {
      k.x += static_cast<std::uint32_t>(s->box.x), k.y += static_cast<std::uint32_t>(s->box.y);
      all.list.push_back(k);
    }
    all.plane_fluxes.insert(all.plane_fluxes.end(), c.plane_fluxes.begin(), c.plane_fluxes.end());
    all.spectral_terms.insert(all.spectral_terms.end(), c.spectral_terms.begin(), c.spectral_terms.end());
    if (all.reference_frequency_hz == 0) all.reference_frequency_hz = c.reference_frequency_hz;
    // Every sub-image has the same scales (one PSF, one settings): their counts and fluxes add.
    for (std::size_t i = 0; i < c.scales.size(); ++i) {
      if (i == all.scales.size()) all.scales.push_back({c.scales[i].size, c.scales[i].bias, 0, 0.0});
      all.scales[i].components += c.scales[i].components;
      all.scales[i].flux += c.scales[i].flux;
    }
  }
  return merged_;
}

float ParallelDeconvolution::peak() {
  float peak = 0.0f;
  for (const std::unique_ptr<Sub>& s : subs_) {
    const float p = s->session->peak();
    if (std::abs(p) > std::abs(peak)) peak = p;
  }
  return peak;
}

void ParallelDeconvolution::finish() {
  for (const std::unique_ptr<Sub>& s : subs_) s->session->finish();
}

}  // namespace gpuclean::clean

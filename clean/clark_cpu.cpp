#include "clean/clark_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "clean/fft_convolver_cpu.hpp"
#include "clean/image_stats.hpp"
#include "clean/restore.hpp"
#include "clean/stop_rules.hpp"
#include "select/cpu_reference.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Candidate {
  std::int32_t x, y;
  float value;
};

// Minor cycles: Högbom on the active set with the beam patch.
class MinorCycle {
 public:
  MinorCycle(const PreparedPsf& psf, std::size_t half_width, std::size_t width, std::size_t pixels)
      : psf_(psf), hw_(static_cast<std::int32_t>(half_width)), width_(width), slot_(pixels, -1) {}

  // Runs until the best member is at or below `limit`, or `budget` components were made.
  // Appends the components; returns how many.
  std::size_t run(std::vector<Candidate>& active, double limit, double gain, bool allow_negative,
                  std::size_t budget, std::vector<Component>* components) {
    for (std::size_t j = 0; j < active.size(); ++j) slot_[index_of(active[j])] = static_cast<std::int32_t>(j);
    const std::size_t patch_area = static_cast<std::size_t>(2 * hw_ + 1) * static_cast<std::size_t>(2 * hw_ + 1);
    auto key = [allow_negative](float v) { return allow_negative ? std::abs(v) : v; };
    std::size_t made = 0;
    while (made < budget) {
      std::size_t best = 0;
      float best_key = -std::numeric_limits<float>::infinity();
      for (std::size_t j = 0; j < active.size(); ++j) {  // index order: first maximum wins ties
        const float k = key(active[j].value);
        if (k > best_key) {
          best_key = k;
          best = j;
        }
      }
      if (active.empty() || !(best_key > limit)) break;
      const Candidate c = active[best];
      const float flux = static_cast<float>(gain) * c.value;
      components->push_back({static_cast<std::uint32_t>(c.x), static_cast<std::uint32_t>(c.y), flux});
      ++made;
      if (active.size() <= patch_area) {
        for (auto& a : active) subtract(a, c, flux);
      } else {
        for (std::int32_t dy = -hw_; dy <= hw_; ++dy) {
          const std::int32_t y = c.y + dy;
          if (y < 0 || static_cast<std::size_t>(y) * width_ >= slot_.size()) continue;
          for (std::int32_t dx = -hw_; dx <= hw_; ++dx) {
            const std::int32_t x = c.x + dx;
            if (x < 0 || static_cast<std::size_t>(x) >= width_) continue;
            const std::int32_t s = slot_[static_cast<std::size_t>(y) * width_ + static_cast<std::size_t>(x)];
            if (s >= 0) subtract(active[static_cast<std::size_t>(s)], c, flux);
          }
        }
      }
    }
    for (const auto& a : active) slot_[index_of(a)] = -1;
    return made;
  }

 private:
  std::size_t index_of(const Candidate& c) const {
    return static_cast<std::size_t>(c.y) * width_ + static_cast<std::size_t>(c.x);
  }
  void subtract(Candidate& a, const Candidate& c, float flux) const {
    const std::int32_t dx = a.x - c.x, dy = a.y - c.y;
    if (dx < -hw_ || dx > hw_ || dy < -hw_ || dy > hw_) return;
    const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(psf_.peak_x) + dx;
    const std::ptrdiff_t py = static_cast<std::ptrdiff_t>(psf_.peak_y) + dy;
    if (px < 0 || py < 0 || px >= static_cast<std::ptrdiff_t>(psf_.image.width) ||
        py >= static_cast<std::ptrdiff_t>(psf_.image.height))
      return;
    a.value -= flux * psf_.image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
  }

  const PreparedPsf& psf_;
  std::int32_t hw_;
  std::size_t width_;
  std::vector<std::int32_t> slot_;  // pixel -> position in the active set, -1 if absent
};

}  // namespace

float largest_exterior_sidelobe(const PreparedPsf& psf, std::size_t half_width) {
  const auto hw = static_cast<std::ptrdiff_t>(half_width);
  float worst = 0.0f;
  for (std::size_t y = 0; y < psf.image.height; ++y) {
    const auto dy = static_cast<std::ptrdiff_t>(y) - static_cast<std::ptrdiff_t>(psf.peak_y);
    for (std::size_t x = 0; x < psf.image.width; ++x) {
      const auto dx = static_cast<std::ptrdiff_t>(x) - static_cast<std::ptrdiff_t>(psf.peak_x);
      if (std::abs(dx) <= hw && std::abs(dy) <= hw) continue;
      worst = std::max(worst, std::abs(psf.image.at(x, y)));
    }
  }
  return worst;
}

CleanResult ClarkCpu::run(const CleanProblem& problem, const CleanSettings& settings,
                          const CycleCallback& on_cycle) {
  const HostImage& dirty = problem.dirty;
  const std::size_t n = dirty.size();
  CleanResult result;
  result.residual = dirty;
  result.model = HostImage(dirty.width, dirty.height);
  const bool neg = settings.allow_negative;
  const auto order = neg ? select::Order::kLargestAbs : select::Order::kLargest;

  const float sidelobe = std::min(largest_exterior_sidelobe(problem.psf, settings.beam_patch), 1.0f);
  FftConvolverCpu psf_conv(problem.psf.image, problem.psf.peak_x, problem.psf.peak_y, dirty.width,
                           dirty.height, settings.threads);
  MinorCycle minor(problem.psf, settings.beam_patch, dirty.width, dirty.size());
  std::vector<float> masked(n);
  std::vector<float> delta(n, 0.0f);
  std::vector<Candidate> active;

  MajorCycleGate gate(settings, on_cycle);
  std::size_t last_candidates = 0;
  while (true) {
    const Peak peak = find_peak(result.residual.pixels, problem.mask, neg, settings.threads);
    double sigma = 0.0;
    const double threshold = current_threshold(settings, result.residual.pixels, &sigma);
    if (!gate.open(result, peak.index >= 0, peak.index >= 0 ? (neg ? std::abs(peak.value) : peak.value) : 0.0f,
                   threshold, sigma, total_flux(result.model.pixels), last_candidates)) {
      break;
    }

    const double limit = std::max({result.threshold, static_cast<double>(sidelobe) * result.peak_residual,
                                   (1.0 - settings.mgain) * result.peak_residual});

    // Active set: the brightest cleanable pixels above the limit.
    const auto t_select = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      masked[i] = problem.mask[i] ? result.residual.pixels[i] : std::numeric_limits<float>::quiet_NaN();
    }
    const std::size_t above = select::count_keys_above_cpu(masked, static_cast<float>(limit), order);
    const std::size_t k = std::max<std::size_t>(1, std::min(settings.select_k, above));
    select::TopK top = select::top_k_cpu(masked, {k, order, false});
    active.clear();
    for (std::size_t j = 0; j < top.indices.size(); ++j) {
      const std::uint32_t i = top.indices[j];
      active.push_back({static_cast<std::int32_t>(i % dirty.width), static_cast<std::int32_t>(i / dirty.width),
                        top.values[j]});
    }
    last_candidates = active.size();
    result.seconds.select += since(t_select);

    const auto t_minor = Clock::now();
    const std::size_t first = result.components.size();
    const std::size_t made = minor.run(active, limit, settings.gain, neg, settings.niter - result.iterations,
                                       &result.components);
    result.iterations += made;
    result.seconds.minor += since(t_minor);
    if (made == 0) {  // the peak itself is at the limit: nothing more can be cleaned safely
      result.reason = StopReason::kThreshold;
      break;
    }

    // Major cycle: subtract this cycle's components through the full PSF.
    const auto t_conv = Clock::now();
    std::fill(delta.begin(), delta.end(), 0.0f);
    for (std::size_t c = first; c < result.components.size(); ++c) {
      const Component& comp = result.components[c];
      const std::size_t i = static_cast<std::size_t>(comp.y) * dirty.width + comp.x;
      delta[i] += comp.flux;
      result.model.pixels[i] += comp.flux;
    }
    psf_conv.convolve(delta.data(), delta.data());
    for (std::size_t i = 0; i < n; ++i) result.residual.pixels[i] -= delta[i];
    result.seconds.convolve += since(t_conv);
  }
  restore_if_asked(problem, settings.threads, result);
  return result;
}

}  // namespace gpuclean::clean

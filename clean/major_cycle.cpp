#include "clean/major_cycle.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "clean/errors.hpp"

namespace gpuclean::clean {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

MajorCycleDriver::MajorCycleDriver(MajorCycleSteps& steps, const CleanProblem& problem,
                                   const CleanSettings& settings, const CycleCallback& on_cycle)
    : steps_(steps),
      state_(steps.state()),
      problem_(problem),
      settings_(settings),
      several_scales_(settings.multiscale.enabled),
      gate_(settings, on_cycle),
      phase_(settings),
      weighing_(settings.local_rms.enabled) {
  if (weighing_)
    rms_fwhm_ = settings.local_rms.window *
                (settings.local_rms.beam_pixels > 0.0 ? settings.local_rms.beam_pixels : beam_fwhm_pixels(problem));
}

double MajorCycleDriver::threshold(double* sigma, std::optional<double> noise) {
  *sigma = 0.0;
  double t = std::max(settings_.threshold, floor_);
  if (settings_.auto_threshold > 0.0 || settings_.auto_mask > 0.0) {
    if (noise) {
      *sigma = *noise;
    } else {
      // An outer loop's round keeps the σ of the residual it started from, as WSClean 3.1 estimates
      // it once per major iteration (deconvolution.cpp, Deconvolution::Perform: StdDevFromMAD of the
      // integrated residual before the algorithm runs); a run on its own re-estimates it every cycle.
      if (!outer_ || !round_sigma_) round_sigma_ = state_.robust_sigma();
      *sigma = *round_sigma_;
    }
    t = std::max(t, settings_.auto_threshold * *sigma);
  }
  return t;
}

void MajorCycleDriver::make_noise_map(CleanResult& result) {
  const auto t = Clock::now();
  const NoiseMapRange r = state_.make_noise_map(settings_.local_rms, rms_fwhm_);
  min_rms_ = r.min_rms;
  result.diagnostics.local_rms = {true, settings_.local_rms.window, rms_fwhm_, r.min_rms, r.max_rms, 0};
  result.diagnostics.seconds.noise_map += since(t);
}

// --auto-mask: the unmasked phase is done; on inside the components' footprints. As in WSClean,
// the local noise map is not used inside the mask.
void MajorCycleDriver::start_auto_mask(CleanResult& result) {
  phase_.switch_to_mask();
  if (weighing_) {  // the keys lose their weights: the divergence rule starts afresh in the new units
    weighing_ = false;
    state_.drop_weights();
    gate_.forget_peaks();
    result.diagnostics.local_rms.dropped_at_cycle = result.stop.major_cycles + 1;
  }
  std::vector<const HostImage*> kernels;
  for (const CleanScale& sc : steps_.scales()) kernels.push_back(&sc.kernel);
  const auto masks =
      auto_masks(kernels, components(result), problem_.mask, problem_.dirty.width, problem_.dirty.height);
  note_auto_mask(result, masks);
  steps_.restrict(masks);
}

bool MajorCycleDriver::next(CleanResult& result) {
  if (done_) return false;
  if (!started_) {
    started_ = true;
    remake_map_ = weighing_;
  }
  if (remake_map_) {  // the first cycle's map, or a residual from outside: the map of the new one
    remake_map_ = false;
    map_peak_.reset();
    make_noise_map(result);
  }
  auto t = Clock::now();
  ScaleChoice choice = steps_.choose();
  if (weighing_) {
    const float peak_now = steps_.residual_peak();
    if (!outer_ && map_peak_ && peak_now <= kLocalRmsRemakeFactor * *map_peak_) {
      make_noise_map(result);
      choice = steps_.choose();
      map_peak_ = peak_now;
    }
    if (!map_peak_) map_peak_ = peak_now;
  }
  if (several_scales_) result.diagnostics.seconds.scales += since(t);
  note_key(choice);
  double sigma = 0.0;
  double final_threshold = threshold(&sigma, weighing_ ? std::optional<double>(min_rms_) : std::nullopt);
  double in_force = phase_.threshold(final_threshold, sigma);
  if (phase_.first_phase() && (choice.scale < 0 || choice.biased <= in_force)) {
    const bool was_weighing = weighing_;
    start_auto_mask(result);
    if (outer_ && round_key_) {  // mid-round: the masked phase starts in the next round (resume)
      auto_mask_started_ = round_floor_ruled_ = true;
      gate_.stop(result, choice.scale >= 0, choice.biased, in_force, sigma, state_.model_flux(), last_candidates_,
                 StopReason::kThreshold);
      done_ = true;
      return false;
    }
    // A round that goes on (at its first cycle, or with -mgain 1, where WSClean's next major
    // iteration gets the same residual) starts the masked phase as a major iteration: σ estimated
    // afresh on the residual now, and a pass of its own.
    if (outer_) {
      round_sigma_.reset();
      pass_done_ = false;
    }
    if (was_weighing || outer_) final_threshold = threshold(&sigma, std::nullopt);
    t = Clock::now();
    choice = steps_.choose();
    if (several_scales_) result.diagnostics.seconds.scales += since(t);
    note_key(choice);  // the masked phase's own key
    in_force = final_threshold;
  }
  // An outer loop's round floor (resume), held after the --auto-mask switch, which waits for its level.
  const double thresholds = in_force;
  if (round_gain_ < 1.0 && choice.scale >= 0) {
    if (!round_key_) round_key_ = choice.biased;
    in_force = std::max(in_force, (1.0 - round_gain_) * static_cast<double>(*round_key_));
  }
  round_floor_ruled_ = in_force > thresholds;
  // An outer loop's round is one WSClean 3.1 major iteration, which cleans its residual in one
  // pass (GenericClean::ExecuteMajorIteration: one SubMinorLoop::Run over the pixels above the
  // round's threshold at its start): pixels outside that set that the pass raised above it are
  // left to the next major iteration. So once a cycle of this round has cleaned its whole set to
  // the round's threshold, the round ends here; a set cut by --select-k, or a limit raised above
  // the threshold (gpuclean's own --mgain), takes more cycles as before. Multiscale and Högbom
  // (no active set) keep cycling: WSClean's multiscale, too, takes several passes per iteration.
  // A pass that cleaned to --auto-mask's level (not to the round's floor) ends the first phase, as
  // WSClean's Deconvolution::Perform ends it when the pass stopped at its threshold.
  if (pass_done_ && choice.scale >= 0 && choice.biased > in_force && result.stop.iterations < settings_.niter) {
    if (phase_.first_phase() && !round_floor_ruled_) {
      start_auto_mask(result);
      auto_mask_started_ = round_floor_ruled_ = true;
    }
    gate_.stop(result, true, choice.biased, in_force, sigma, state_.model_flux(), last_candidates_,
               StopReason::kThreshold);
    done_ = true;
    return false;
  }
  // Several scales: the divergence rule watches the residual's own peak (stop_rules.hpp).
  std::optional<float> watched;
  if (several_scales_) watched = steps_.residual_peak();
  if (!gate_.open(result, choice.scale >= 0, choice.biased, in_force, sigma, state_.model_flux(), last_candidates_,
                  watched)) {
    done_ = true;
    return false;
  }

  const auto b = static_cast<std::size_t>(choice.scale);
  const CleanScale& scale = steps_.scales()[b];
  // Clark's limit (clark_cpu.hpp), in the scale image's units.
  const double limit = std::max({result.stop.threshold / scale.bias, static_cast<double>(scale.sidelobe) * choice.unweighted,
                                 (1.0 - settings_.mgain) * choice.key,
                                 several_scales_ ? (1.0 - settings_.multiscale.gain) * choice.key : 0.0});
  t = Clock::now();
  const Selection selection = steps_.select(choice, limit, result.stop.major_cycles);
  last_candidates_ = selection.count;
  result.diagnostics.seconds.select += since(t) - selection.untimed_seconds;

  t = Clock::now();
  cycle_scales_.emplace_back(result.stop.iterations, static_cast<std::uint32_t>(b));
  const std::size_t asked = settings_.niter - result.stop.iterations;
  const std::size_t made = steps_.minor_cycle(b, limit, asked);
  result.stop.iterations += made;
  result.diagnostics.seconds.minor += since(t);
  if (made == 0) {  // the peak itself is at the limit: nothing more can be cleaned safely
    result.stop.reason = StopReason::kThreshold;
    done_ = true;
    return false;
  }
  // A pass cut by the budget or by the GPU engine's components per cycle is not complete either.
  pass_done_ = outer_ && !several_scales_ && selection.count > 0 && selection.count < settings_.select_k &&
               limit == result.stop.threshold / scale.bias && made < std::min(asked, steps_.cycle_capacity());
  t = Clock::now();
  steps_.subtract(b, made);
  result.diagnostics.seconds.convolve += since(t);
  return true;
}

void MajorCycleDriver::note_key(const ScaleChoice& choice) {
  last_key_ = choice.scale >= 0 ? choice.biased : 0.0f;
  if (!first_key_) first_key_ = last_key_;
}

void MajorCycleDriver::resume(double floor, double round_gain) {
  floor_ = floor;
  round_gain_ = round_gain;
  round_key_.reset();
  first_key_.reset();
  round_sigma_.reset();
  pass_done_ = false;
  round_floor_ruled_ = auto_mask_started_ = false;
  outer_ = true;
  done_ = false;
  remake_map_ = weighing_;
  gate_.forget_peaks();
}

std::vector<Component> MajorCycleDriver::components(const CleanResult& result) {
  std::vector<Component> out = state_.components(result.stop.iterations);
  assign_scales(out);
  return out;
}

void MajorCycleDriver::assign_scales(std::vector<Component>& components) const {
  for (std::size_t c = 0; c < cycle_scales_.size(); ++c) {
    const std::size_t end = c + 1 < cycle_scales_.size() ? std::min(cycle_scales_[c + 1].first, components.size())
                                                          : components.size();
    for (std::size_t i = cycle_scales_[c].first; i < end; ++i) components[i].scale = cycle_scales_[c].second;
  }
}

void MajorCycleDriver::finish(CleanResult& result) {
  steps_.release(result);
  state_.finish(result);
  assign_scales(result.components.list);
  result.components.scales = summarise_scales(steps_.scales(), result.components.list);
}

CleanResult MajorCycleDriver::run() {
  CleanResult result;
  while (next(result)) {
  }
  finish(result);
  return result;
}

Selection MajorCycleSteps::select(const ScaleChoice&, double, std::size_t) { return {}; }
void MajorCycleSteps::subtract(std::size_t, std::size_t) {}
void MajorCycleSteps::release(CleanResult&) {}

const float* only_plane(const std::vector<const float*>& planes) {
  if (planes.size() != 1)
    throw InvalidInput("a residual for one plane came with " + std::to_string(planes.size()) + " planes.");
  return planes[0];
}

CleanResult run_major_cycles(MajorCycleSteps& steps, const CleanProblem& problem, const CleanSettings& settings,
                             const CycleCallback& on_cycle) {
  return MajorCycleDriver(steps, problem, settings, on_cycle).run();
}

}  // namespace gpuclean::clean

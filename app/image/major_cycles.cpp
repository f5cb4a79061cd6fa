#include "app/image/major_cycles.hpp"

#include "io/test_pause.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "app/outer/major_cycle_rule.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<const float*> pointers(const std::vector<clean::HostImage>& planes) {
  std::vector<const float*> out;
  for (const clean::HostImage& p : planes) out.push_back(p.pixels.data());
  return out;
}

// Why the last round ended the loop, in WSClean's order of precedence: -niter, then -nmiter
// (Deconvolution::Perform checks both after the round), then the round's own reason.
// With sub-images (per_sub_image) only a sub-image's own budget ends the loop at -niter.
MajorCycleStop stop_of(const MajorCycleStep& last, std::size_t iterations, const MajorCycleSettings& s, bool due,
                       bool per_sub_image) {
  if ((!per_sub_image && iterations >= s.niter) || last.round.reason == clean::StopReason::kMaxIterations)
    return MajorCycleStop::kNiter;
  if (due) return MajorCycleStop::kNmiter;
  return last.round.reason == clean::StopReason::kThreshold ? MajorCycleStop::kConverged : MajorCycleStop::kNothingLeft;
}

}  // namespace

std::string_view to_string(MajorCycleStop s) {
  switch (s) {
    case MajorCycleStop::kNone: return "no deconvolution";
    case MajorCycleStop::kConverged: return "threshold";
    case MajorCycleStop::kNiter: return "niter";
    case MajorCycleStop::kNmiter: return "nmiter";
    case MajorCycleStop::kNothingLeft: return "nothing left to clean";
    case MajorCycleStop::kAutoMaskNmiter: return "auto-mask-nmiter";
  }
  return "?";
}

double boosted_gain(double mgain, double boost, std::size_t k) {
  if (k > 2) return mgain;
  if (k == 2) boost = (boost - 1.0) * 0.5 + 1.0;
  return 1.0 - std::pow(1.0 - mgain, boost);
}

std::string progress_line(const MajorCycleStep& step, std::size_t iterations_so_far, bool weighted) {
  char line[256];
  std::snprintf(line, sizeof line, "major cycle %zu: %zu components (%zu in all), peak %.4g -> %.4g Jy", step.index,
                step.round.components, iterations_so_far, double(step.round.peak), double(step.round.peak_left));
  std::string out = line;
  if (weighted) {  // what the threshold is compared with: WSClean's peaks with -local-rms
    std::snprintf(line, sizeof line, " (local-RMS weighted %.4g -> %.4g Jy)", double(step.round.key),
                  double(step.round.key_left));
    out += line;
  }
  std::snprintf(line, sizeof line, ", threshold %.4g Jy", step.round.threshold);
  out += line;
  if (step.round.noise_sigma > 0) {
    std::snprintf(line, sizeof line, " (noise %.4g Jy)", step.round.noise_sigma);
    out += line;
  }
  if (step.predicted) {
    std::snprintf(line, sizeof line, ", re-imaged peak %.4g Jy", double(step.peak_reimaged));
    out += line;
  }
  std::snprintf(line, sizeof line, "; deconvolve %.3g s", step.deconvolve_s);
  out += line;
  if (step.predicted) {
    std::snprintf(line, sizeof line, ", predict %.3g s, invert %.3g s", step.predict_s, step.invert_s);
    out += line;
  }
  out += step.more ? "; another major cycle" : "; last major cycle";
  return out;
}

MajorCycleReport run_major_cycles(MajorCycleImager& imager, clean::RoundEngine& session,
                                  const MajorCycleSettings& settings, const MajorCycleProgress& progress,
                                  const clean::CycleCallback& on_cycle) {
  if (!(settings.mgain > 0.0 && settings.mgain <= 1.0))
    throw clean::InvalidSettings("-mgain must be in (0, 1]; got " + std::to_string(settings.mgain) + ".");
  MajorCycleReport report;
  if (settings.niter == 0) return report;  // WSClean images only (runMajorIterations skips the loop)
  std::optional<std::size_t> auto_mask_cycle;  // the cycle whose round reached the auto-mask threshold
  const bool per_sub_image = session.sub_images() > 1;  // -niter is each sub-image's (WSClean)
  const auto budget_left = [&] {
    return per_sub_image ? settings.niter : report.iterations < settings.niter ? settings.niter - report.iterations : 0;
  };
  for (std::size_t k = 1;; ++k) {
    MajorCycleStep step;
    step.index = k;
    step.budget = budget_left();
    step.gain = settings.mgain == 1.0 ? 1.0 : boosted_gain(settings.mgain, settings.mgain_boosting, k);
    // The floor is 0: the session's own thresholds (-threshold, -auto-threshold) are the rule.
    auto start = std::chrono::steady_clock::now();
    step.round = session.clean(0.0, step.gain, step.budget, on_cycle);
    report.iterations += step.round.components;
    // At --auto-mask's switch WSClean continues "with deeper threshold and mask" if budget is left.
    const bool finished_now = step.round.auto_mask_started && !auto_mask_cycle;
    if (finished_now) auto_mask_cycle = k;
    // Sub-images: another round while one of them stopped at the floor, none used its budget.
    const bool wants_more = per_sub_image ? step.round.reason == clean::StopReason::kThreshold && step.round.round_floor
                                          : round_wants_more(step.round, step.budget);
    const bool budget_used = per_sub_image ? step.round.reason == clean::StopReason::kMaxIterations
                                           : step.round.components >= step.budget;
    bool due = wants_more || (step.round.auto_mask_started && !budget_used);
    const bool nmiter_due = due && settings.nmiter != 0 && k >= settings.nmiter;
    const bool mask_nmiter_due = due && !nmiter_due && auto_mask_cycle && settings.auto_mask_nmiter &&
                                 k - *auto_mask_cycle >= *settings.auto_mask_nmiter;
    step.more = due && !nmiter_due && !mask_nmiter_due;
    // WSClean 3.7's dual and full modes: while the mask is being made (and in the cycle that made
    // it), the round goes on in the image (radler's Perform and CalculateContinuedLoopGain).
    if (settings.mode != MajorIterationMode::kSingle && settings.auto_masking && step.more &&
        (!auto_mask_cycle || finished_now) && budget_left() > 0) {
      double achieved = 0.0;
      if (step.round.peak != 0.0f && step.round.peak_left != 0.0f)
        achieved = std::max(0.0, 1.0 - std::abs(double(step.round.peak_left) / double(step.round.peak)));
      if (settings.mode == MajorIterationMode::kFull) step.continued_gain = 1.0;
      else if (finished_now) step.continued_gain = achieved > 0 ? std::max(0.0, 1.0 - (1.0 - settings.mgain) / (1.0 - achieved)) : 0.0;
      else step.continued_gain = settings.mgain;
      if (step.continued_gain != 0.0) {
        const clean::OuterLoopRound more = session.clean(0.0, step.continued_gain, budget_left(), on_cycle);
        step.continued_components = more.components;
        report.iterations += more.components;
        step.round.components += more.components;
        step.round.peak_left = more.peak_left;
        step.round.key_left = more.key_left;
        step.round.threshold = more.threshold;
        if (more.reason == clean::StopReason::kMaxIterations || (!per_sub_image && report.iterations >= settings.niter))
          step.more = false;
      }
    }
    step.deconvolve_s = seconds_since(start);
    if (k == 1 && settings.keep_first_residual && settings.mgain != 1.0) report.first_residuals = session.residuals();
    // WSClean predicts and re-images after every round with -mgain != 1, the last one included,
    // unless -skip-final-iteration (WSClean 3.7) skips it after the last.
    if (settings.mgain != 1.0 && !(settings.skip_final_iteration && !step.more)) {
      start = std::chrono::steady_clock::now();
      imager.predict(session.models());
      step.predict_s = seconds_since(start);
      start = std::chrono::steady_clock::now();
      const std::vector<clean::HostImage> residuals = imager.invert_residual();
      step.invert_s = seconds_since(start);
      if (residuals.size() != session.planes())
        throw clean::InvalidInput("the imager gave " + std::to_string(residuals.size()) + " residual planes; the run has " +
                                  std::to_string(session.planes()) + ".");
      session.set_residuals(pointers(residuals));
      step.predicted = true;
      // Where the stopping rule looks (inside the mask), as WSClean's "Initial peak" of the next
      // major iteration: the whole image's peak read as a failure beside a masked threshold.
      step.peak_reimaged = session.peak();
      ++report.predictions;
    }
    report.cycles.push_back(step);
    if (progress) progress(progress_line(step, report.iterations, settings.local_rms));
    io::test_pause(("cycle-" + std::to_string(k)).c_str());
    if (!step.more) {
      report.stop = mask_nmiter_due ? MajorCycleStop::kAutoMaskNmiter : stop_of(step, report.iterations, settings, due, per_sub_image);
      return report;
    }
  }
}

}  // namespace gpuclean::app

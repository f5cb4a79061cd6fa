#include "app/image/major_cycles.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "app/outer/major_cycle_rule.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

float peak_of(const std::vector<clean::HostImage>& planes) {
  float peak = 0.0f;
  for (const clean::HostImage& p : planes)
    for (float v : p.pixels)
      if (std::isfinite(v)) peak = std::max(peak, std::abs(v));
  return peak;
}

std::vector<const float*> pointers(const std::vector<clean::HostImage>& planes) {
  std::vector<const float*> out;
  for (const clean::HostImage& p : planes) out.push_back(p.pixels.data());
  return out;
}

// Why the last round ended the loop, in WSClean's order of precedence: -niter, then -nmiter
// (Deconvolution::Perform checks both after the round), then the round's own reason.
MajorCycleStop stop_of(const MajorCycleStep& last, std::size_t iterations, const MajorCycleSettings& s, bool due) {
  if (iterations >= s.niter) return MajorCycleStop::kNiter;
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
  }
  return "?";
}

std::string progress_line(const MajorCycleStep& step, std::size_t iterations_so_far) {
  char line[256];
  std::snprintf(line, sizeof line, "major cycle %zu: %zu components (%zu in all), peak %.4g -> %.4g Jy, threshold %.4g Jy",
                step.index, step.round.components, iterations_so_far, double(step.round.peak),
                double(step.round.peak_left), step.round.threshold);
  std::string out = line;
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

MajorCycleReport run_major_cycles(MajorCycleImager& imager, clean::OuterLoopSession& session,
                                  const MajorCycleSettings& settings, const MajorCycleProgress& progress,
                                  const clean::CycleCallback& on_cycle) {
  if (!(settings.mgain > 0.0 && settings.mgain <= 1.0))
    throw clean::InvalidSettings("-mgain must be in (0, 1]; got " + std::to_string(settings.mgain) + ".");
  MajorCycleReport report;
  if (settings.niter == 0) return report;  // WSClean images only (runMajorIterations skips the loop)
  for (std::size_t k = 1;; ++k) {
    MajorCycleStep step;
    step.index = k;
    step.budget = settings.niter - report.iterations;
    // The floor is 0: the session's own thresholds (-threshold, -auto-threshold) are the rule.
    auto start = std::chrono::steady_clock::now();
    step.round = session.clean(0.0, settings.mgain, step.budget, on_cycle);
    step.deconvolve_s = seconds_since(start);
    report.iterations += step.round.components;
    // At --auto-mask's switch WSClean continues "with deeper threshold and mask" if budget is left.
    const bool due = round_wants_more(step.round, step.budget) ||
                     (step.round.auto_mask_started && step.round.components < step.budget);
    step.more = due && !(settings.nmiter != 0 && k >= settings.nmiter);
    // WSClean predicts and re-images after every round with -mgain != 1, the last one included.
    if (settings.mgain != 1.0) {
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
      step.peak_reimaged = peak_of(residuals);
      ++report.predictions;
    }
    report.cycles.push_back(step);
    if (progress) progress(progress_line(step, report.iterations));
    if (!step.more) {
      report.stop = stop_of(step, report.iterations, settings, due);
      return report;
    }
  }
}

}  // namespace gpuclean::app

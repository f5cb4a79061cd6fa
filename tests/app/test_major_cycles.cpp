// gpuclean image's Cotton-Schwab loop (app/image/major_cycles.hpp) against WSClean 3.1's
// runMajorIterations, with an imager whose "visibilities" are the image plane: the data are a
// dirty image, predicting stores the model, and re-imaging gives dirty - PSF (x) model by direct
// convolution (double precision). The imager's PSF may differ from the one the session cleans
// with, as a gridder's true response differs from the PSF CLEAN uses, so that a residual the
// loop did not re-image can be told from one it did.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "app/image/major_cycles.hpp"
#include "app/outer/major_cycle_rule.hpp"
#include "clean/outer_loop.hpp"
#include "tests/support/synthetic.hpp"

namespace ga = gpuclean::app;
namespace gc = gpuclean::clean;
namespace gt = gpuclean::test;

namespace {

constexpr std::size_t kN = 64;

class ImagePlaneImager : public ga::MajorCycleImager {
 public:
  // `true_sigma`: the PSF of the "visibilities"; `clean_sigma`: the one handed to the session.
  ImagePlaneImager(double true_sigma, double clean_sigma)
      : truth_(gc::prepare_psf(gt::sidelobed_psf(kN, true_sigma), kN, kN, nullptr)),
        given_(gt::sidelobed_psf(kN, clean_sigma)),
        dirty_(gt::dirty_of({{20, 24, 1.0f}, {44, 40, 0.3f}, {30, 48, 0.1f}, {50, 14, 0.04f}}, truth_, kN)),
        model_(kN, kN) {}

  std::vector<gc::HostImage> dirty() override { return {dirty_}; }
  std::vector<gc::HostImage> psfs() override { return {given_}; }
  void predict(const std::vector<gc::HostImage>& models) override {
    model_ = models.at(0);
    ++predictions;
  }
  std::vector<gc::HostImage> invert_residual() override {
    ++inversions;
    return {residual_of(model_)};
  }
  gc::HostImage residual_of(const gc::HostImage& model) const {
    gc::HostImage r = dirty_;
    const gc::HostImage predicted = gt::convolve_direct(model, truth_);
    for (std::size_t i = 0; i < r.size(); ++i) r.pixels[i] -= predicted.pixels[i];
    return r;
  }

  std::size_t predictions = 0, inversions = 0;

 private:
  gc::PreparedPsf truth_;
  gc::HostImage given_, dirty_;

 public:
  gc::HostImage model_;  // the last prediction's
};

// WSClean 3.1's defaults for the session's own rules: -threshold, no -auto-threshold.
gc::CleanSettings clean_settings(double threshold) {
  gc::CleanSettings s;
  s.device = gc::Device::kCpu;
  s.threads = 2;
  s.threshold = threshold;
  s.auto_threshold = 0.0;
  return s;
}

struct LoopRun {
  ImagePlaneImager imager;
  std::vector<gc::HostImage> dirty;  // the first inversion
  gc::OuterLoopSession session;
  ga::MajorCycleReport report;
  std::vector<std::string> lines;

  LoopRun(double threshold, ga::MajorCycleSettings loop, double true_sigma = 2.0, double clean_sigma = 2.0)
      : imager(true_sigma, clean_sigma), dirty(imager.dirty()),
        session(clean_settings(threshold), input(imager), {dirty[0].pixels.data()}) {
    report = ga::run_major_cycles(imager, session, loop, [this](const std::string& l) { lines.push_back(l); });
  }
  static gc::OuterLoopInput input(ImagePlaneImager& imager) {
    gc::OuterLoopInput in;
    in.width = in.height = kN;
    in.psfs = imager.psfs();
    in.frequencies_hz = {1.4e9};
    in.weights = {1.0};
    return in;
  }
};

float max_abs_diff(const gc::HostImage& a, const gc::HostImage& b) {
  float d = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a.pixels[i] - b.pixels[i]));
  return d;
}

// -mgain 1 (WSClean's default): one deconvolution call, no prediction, no re-imaging.
TEST(MajorCycles, MgainOneIsOneRoundWithoutPredict) {
  LoopRun run(0.01, {.niter = 10000, .mgain = 1.0, .nmiter = 20});
  ASSERT_EQ(run.report.cycles.size(), 1u);
  EXPECT_EQ(run.report.predictions, 0u);
  EXPECT_EQ(run.imager.predictions, 0u);
  EXPECT_EQ(run.imager.inversions, 0u);
  EXPECT_FALSE(run.report.cycles[0].predicted);
  EXPECT_FALSE(run.report.cycles[0].more);
  EXPECT_EQ(run.report.stop, ga::MajorCycleStop::kConverged);
  EXPECT_GT(run.report.iterations, 0u);
  EXPECT_EQ(run.lines.size(), 1u);
}

// -mgain 0.8: each round stops at 0.2 x its first peak until -threshold rules; the sources span
// 1 to 0.04 Jy against 0.01, so three rounds at least; a prediction and re-imaging after each,
// the last one included (WSClean's 4 predictions for 4 major iterations).
TEST(MajorCycles, MgainBelowOneCyclesToThresholdAndPredictsAfterTheLast) {
  LoopRun run(0.01, {.niter = 10000, .mgain = 0.8, .nmiter = 20});
  const auto& cycles = run.report.cycles;
  ASSERT_GE(cycles.size(), 3u);
  EXPECT_EQ(run.report.predictions, cycles.size());
  EXPECT_EQ(run.imager.predictions, cycles.size());
  EXPECT_EQ(run.imager.inversions, cycles.size());
  for (std::size_t k = 0; k + 1 < cycles.size(); ++k) {
    EXPECT_TRUE(cycles[k].more) << k;
    EXPECT_TRUE(cycles[k].round.round_floor) << k;
    EXPECT_TRUE(cycles[k].predicted) << k;
    // Each round cleans down to its own floor, not to the threshold.
    EXPECT_LE(cycles[k].round.peak_left, 0.2f * cycles[k].round.peak * 1.001f) << k;
    EXPECT_GT(cycles[k].round.peak_left, 0.01f) << k;
  }
  const ga::MajorCycleStep& last = cycles.back();
  EXPECT_FALSE(last.more);
  EXPECT_TRUE(last.predicted);
  EXPECT_EQ(last.round.reason, gc::StopReason::kThreshold);
  EXPECT_FALSE(last.round.round_floor);
  EXPECT_EQ(run.report.stop, ga::MajorCycleStop::kConverged);
  EXPECT_LE(last.round.peak_left, 0.01f);
  std::size_t sum = 0;
  for (const auto& c : cycles) sum += c.round.components;
  EXPECT_EQ(sum, run.report.iterations);
  // The last prediction is the final model's.
  EXPECT_EQ(max_abs_diff(run.imager.model_, run.session.models()[0]), 0.0f);
  for (const std::string& line : run.lines) std::cout << line << "\n";
  ASSERT_EQ(run.lines.size(), cycles.size());
  EXPECT_NE(run.lines[0].find("major cycle 1:"), std::string::npos) << run.lines[0];
  EXPECT_NE(run.lines.back().find("last major cycle"), std::string::npos) << run.lines.back();
}

// -nmiter 2 stops a run that wanted more after two rounds, still with the prediction after the
// second (Deconvolution::Perform clears reachedMajorThreshold; the predict follows regardless).
TEST(MajorCycles, NmiterCapsTheCyclesAndStillPredictsAfterTheLast) {
  LoopRun run(0.01, {.niter = 10000, .mgain = 0.8, .nmiter = 2});
  ASSERT_EQ(run.report.cycles.size(), 2u);
  EXPECT_TRUE(run.report.cycles[0].more);
  EXPECT_FALSE(run.report.cycles[1].more);
  EXPECT_TRUE(run.report.cycles[1].round.round_floor);  // it wanted another
  EXPECT_EQ(run.report.predictions, 2u);
  EXPECT_EQ(run.imager.predictions, 2u);
  EXPECT_EQ(run.report.stop, ga::MajorCycleStop::kNmiter);
}

// -niter is the budget over every round: the loop stops when it is spent.
TEST(MajorCycles, NiterIsTheBudgetOverEveryRound) {
  LoopRun run(0.0001, {.niter = 60, .mgain = 0.8, .nmiter = 0});
  EXPECT_EQ(run.report.iterations, 60u);
  EXPECT_EQ(run.report.stop, ga::MajorCycleStop::kNiter);
  EXPECT_EQ(run.report.cycles.back().budget, 60u - (run.report.iterations - run.report.cycles.back().round.components));
  EXPECT_EQ(run.report.predictions, run.report.cycles.size());
}

// A threshold above the first round's floor: one round, stopped at the threshold, and its
// residual still re-imaged.
TEST(MajorCycles, ThresholdAboveTheFloorStopsAfterOneRound) {
  LoopRun run(0.5, {.niter = 10000, .mgain = 0.8, .nmiter = 20});
  ASSERT_EQ(run.report.cycles.size(), 1u);
  EXPECT_EQ(run.report.cycles[0].round.reason, gc::StopReason::kThreshold);
  EXPECT_FALSE(run.report.cycles[0].round.round_floor);
  EXPECT_EQ(run.report.stop, ga::MajorCycleStop::kConverged);
  EXPECT_EQ(run.imager.predictions, 1u);
}

// -niter 0: imaging only, the loop does nothing.
TEST(MajorCycles, NiterZeroRunsNoRound) {
  LoopRun run(0.01, {.niter = 0, .mgain = 0.8, .nmiter = 20});
  EXPECT_TRUE(run.report.cycles.empty());
  EXPECT_EQ(run.imager.predictions, 0u);
  EXPECT_EQ(run.report.stop, ga::MajorCycleStop::kNone);
}

// The residual the loop leaves is dirty - PSF (x) final model of the "visibilities", whose PSF is
// 10% wider than the one CLEAN uses: the session's own image-plane residual (which it would keep
// without the last re-imaging) is far from it.
TEST(MajorCycles, FinalResidualIsReimagedFromTheFinalModel) {
  LoopRun run(0.01, {.niter = 10000, .mgain = 0.8, .nmiter = 20}, 2.2, 2.0);
  ASSERT_GE(run.report.cycles.size(), 2u);
  const gc::HostImage model = run.session.models()[0];
  const gc::HostImage expected = run.imager.residual_of(model);
  const gc::HostImage residual = run.session.residuals()[0];
  for (const std::string& line : run.lines) std::cout << line << "\n";
  EXPECT_LT(max_abs_diff(residual, expected), 1e-6f);
  float peak = 0.0f;
  for (float v : expected.pixels) peak = std::max(peak, std::abs(v));
  EXPECT_FLOAT_EQ(run.report.cycles.back().peak_reimaged, peak);
}

// The shared rule (the hook's wsclean_round.cpp calls it too).
TEST(MajorCycles, RoundWantsMoreOnlyAtItsFloorWithBudgetLeft) {
  gc::OuterLoopRound r;
  r.reason = gc::StopReason::kThreshold;
  r.round_floor = true;
  r.components = 10;
  EXPECT_TRUE(ga::round_wants_more(r, 11));
  EXPECT_FALSE(ga::round_wants_more(r, 10));  // the budget is spent
  r.components = 0;
  EXPECT_FALSE(ga::round_wants_more(r, 11));  // nothing was made
  r.components = 10;
  r.round_floor = false;
  EXPECT_FALSE(ga::round_wants_more(r, 11));  // at a threshold
  r.round_floor = true;
  r.reason = gc::StopReason::kDiverged;
  EXPECT_FALSE(ga::round_wants_more(r, 11));
}

}  // namespace

namespace {

// WSClean 3.7's loop options (radler): the boosted gain of the first two major cycles, and
// -skip-final-iteration's missing last prediction.
TEST(MajorCycles, BoostedGainIsRadlers) {
  EXPECT_DOUBLE_EQ(ga::boosted_gain(0.8, 1.0, 1), 0.8);
  EXPECT_NEAR(ga::boosted_gain(0.8, 2.0, 1), 1.0 - 0.2 * 0.2, 1e-15);       // as deep as two cycles
  EXPECT_NEAR(ga::boosted_gain(0.8, 2.0, 2), 1.0 - std::pow(0.2, 1.5), 1e-15);  // half the boost
  EXPECT_DOUBLE_EQ(ga::boosted_gain(0.8, 2.0, 3), 0.8);
  LoopRun plain(0.01, {.niter = 10000, .mgain = 0.8, .nmiter = 20});
  LoopRun boosted(0.01, {.niter = 10000, .mgain = 0.8, .nmiter = 20, .mgain_boosting = 2.0});
  ASSERT_GE(boosted.report.cycles.size(), 2u);
  EXPECT_NEAR(boosted.report.cycles[0].gain, 0.96, 1e-12);
  EXPECT_GT(boosted.report.cycles[0].round.components, plain.report.cycles[0].round.components);
  EXPECT_LE(boosted.report.cycles.size(), plain.report.cycles.size());
}

TEST(MajorCycles, SkipFinalIterationLeavesTheLastRoundUnpredicted) {
  LoopRun plain(0.01, {.niter = 10000, .mgain = 0.8, .nmiter = 20});
  LoopRun skipped(0.01, {.niter = 10000, .mgain = 0.8, .nmiter = 20, .skip_final_iteration = true});
  ASSERT_EQ(skipped.report.cycles.size(), plain.report.cycles.size());
  EXPECT_EQ(skipped.report.predictions, plain.report.predictions - 1);
  EXPECT_FALSE(skipped.report.cycles.back().predicted);
  EXPECT_TRUE(skipped.report.cycles.front().predicted);
  EXPECT_EQ(skipped.report.iterations, plain.report.iterations);
}

// -auto-mask-nmiter N (radler): at most N major cycles after the one that reached the auto-mask
// threshold (here -abs-auto-mask's 0.05 Jy, between the sources); -save-first-residual keeps the
// first round's residual.
TEST(MajorCycles, AutoMaskNmiterAndFirstResidual) {
  ImagePlaneImager imager(2.0, 2.0);
  std::vector<gc::HostImage> dirty = imager.dirty();
  gc::CleanSettings s = clean_settings(0.001);
  s.auto_mask_absolute = 0.05;
  gc::OuterLoopSession session(s, LoopRun::input(imager), {dirty[0].pixels.data()});
  const ga::MajorCycleReport free_run = [&] {
    ImagePlaneImager other(2.0, 2.0);
    std::vector<gc::HostImage> d = other.dirty();
    gc::OuterLoopSession free_session(s, LoopRun::input(other), {d[0].pixels.data()});
    return ga::run_major_cycles(other, free_session, {.niter = 100000, .mgain = 0.8, .nmiter = 30});
  }();
  const ga::MajorCycleReport limited = ga::run_major_cycles(
      imager, session,
      {.niter = 100000, .mgain = 0.8, .nmiter = 30, .auto_mask_nmiter = 1, .auto_masking = true,
       .keep_first_residual = true});
  std::size_t switched = 0;
  for (const ga::MajorCycleStep& c : limited.cycles)
    if (c.round.auto_mask_started) switched = c.index;
  ASSERT_GT(switched, 0u) << "the auto-mask threshold was not reached";
  std::printf("auto-mask reached in cycle %zu; %zu cycles with -auto-mask-nmiter 1, %zu without\n", switched,
              limited.cycles.size(), free_run.cycles.size());
  ASSERT_GT(free_run.cycles.size(), switched + 1) << "the limit would not bind here";
  EXPECT_EQ(limited.cycles.size(), switched + 1);
  EXPECT_EQ(limited.stop, ga::MajorCycleStop::kAutoMaskNmiter);
  ASSERT_EQ(limited.first_residuals.size(), 1u);
  EXPECT_EQ(limited.first_residuals[0].width, kN);
}

}  // namespace

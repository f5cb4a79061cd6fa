// An outer loop's rounds (clean/outer_loop.hpp) with --local-rms and --auto-mask, as WSClean's
// major cycle runs them (radler.cc): one noise map per round, made from the round's residual, so
// that the round floor (1 - mgain) x the round's first key holds in the units it was taken in;
// and --auto-mask's switch ends the round, the masked phase starting on the next (re-imaged) one.
// The noise map is recomputed here from the round's first residual (local_noise_map), and the
// "imager" re-images exactly: dirty - model (x) PSF by direct convolution.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "clean/image_stats.hpp"
#include "clean/local_rms.hpp"
#include "clean/outer_loop.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/synthetic_cube.hpp"

namespace gc = gpuclean::clean;
namespace gt = gpuclean::test;

namespace {

constexpr std::size_t kN = 128;
constexpr double kRoundGain = 0.8;  // WSClean's -mgain

class OuterLoopRounds : public gt::DeviceTest {
 protected:
  void SetUp() override {
    gt::DeviceTest::SetUp();
    // A bright source whose sidelobes raise the local noise around it, fainter ones in quiet
    // parts, and noise of 1 mJy.
    gt::make_cube(cube_, kN, 1, 0.1e9,
                  {{40, 44, 1.0, 0.0}, {100, 96, 0.1, 0.0}, {20, 104, 0.05, 0.0}, {96, 24, 0.03, 0.0}}, 1e-3);
  }
  gc::CleanSettings settings() const {
    gc::CleanSettings s;
    s.device = GetParam();
    s.threads = 2;
    s.threshold = 0.0;
    s.auto_threshold = 3.0;
    s.local_rms.enabled = true;
    s.local_rms.window = 30.0;
    s.local_rms.beam_pixels = 2.0;  // the window is 60 pixels wide, whatever the PSF's fitted beam
    return s;
  }
  gc::OuterLoopInput input() const {
    gc::OuterLoopInput in;
    in.width = in.height = kN;
    in.psfs = {cube_.psf[0].image};
    in.frequencies_hz = {cube_.freqs[0]};
    in.weights = {1.0};
    return in;
  }
  gc::HostImage reimage(const gc::HostImage& model) const {
    gc::HostImage r = cube_.dirty[0];
    const gc::HostImage predicted = gt::convolve_direct(model, cube_.psf[0]);
    for (std::size_t i = 0; i < r.size(); ++i) r.pixels[i] -= predicted.pixels[i];
    return r;
  }
  gt::SyntheticCube cube_;
};

// The peak key of `image` under the --local-rms weights of `map_of` (the map a round was given).
double key(const gc::HostImage& image, const gc::HostImage& map_of, const gc::CleanSettings& s) {
  const gc::HostImage map = gc::local_noise_map(map_of, s.local_rms, s.local_rms.window * s.local_rms.beam_pixels, 1);
  const gc::LocalRmsWeights w = gc::local_rms_weights(map);
  double k = 0.0;
  for (std::size_t i = 0; i < image.size(); ++i) k = std::max(k, std::abs(image.pixels[i]) * double(w.weights[i]));
  return k;
}

// A round cleans to (1 - mgain) x its first key, keys taken under the map of its own residual:
// not deeper than a last component's step (gain) below it, as the map is not remade in the
// middle of a round (WSClean keeps its RMS image for the whole major cycle), and not far above.
// gpuclean's own --mgain 0.5 makes each round take several of its cycles, as multiscale's gain
// and Clark's sidelobe limit do.
TEST_P(OuterLoopRounds, LocalRmsRoundsHoldTheirFloorInTheirOwnUnits) {
  gc::CleanSettings s = settings();
  s.mgain = 0.5;
  gc::HostImage current = cube_.dirty[0];
  gc::OuterLoopSession session(s, input(), {current.pixels.data()});
  std::size_t rounds = 0, floor_rounds = 0;
  for (bool more = true; more && rounds < 20; ++rounds) {
    if (rounds > 0) session.set_residuals({current.pixels.data()});
    const double first = key(current, current, s);
    const gc::OuterLoopRound r = session.clean(0.0, kRoundGain, 100000, nullptr);
    const gc::HostImage left = session.residuals()[0];
    const double last = key(left, current, s);
    if (r.round_floor) {
      ++floor_rounds;
      EXPECT_GT(r.major_cycles, 1u);
      EXPECT_GE(last, (1.0 - s.gain) * (1.0 - kRoundGain) * first) << "round " << rounds + 1 << " cleaned below its floor";
      EXPECT_LE(last, 1.25 * (1.0 - kRoundGain) * first) << "round " << rounds + 1;
    }
    more = r.round_floor && r.components > 0;
    current = reimage(session.models()[0]);
  }
  EXPECT_GE(floor_rounds, 2u);
  EXPECT_LT(rounds, 20u) << "the rounds must converge";
  EXPECT_DOUBLE_EQ(session.result().diagnostics.local_rms.window_fwhm_pixels, 60.0) << "--local-rms-beam sets the window";
}

// --auto-mask's first phase ends where its level is reached; when that happens after a round's
// first cycle, the round ends there (auto_mask_started, round_floor: another round is due) and
// no cycle of that round runs inside the mask. The next round, on the re-imaged residual, cleans
// inside the mask without the weights, down to its own floor.
TEST_P(OuterLoopRounds, AutoMaskSwitchEndsTheRound) {
  gc::CleanSettings s = settings();
  s.auto_mask = 8.0;
  gc::HostImage current = cube_.dirty[0];
  gc::OuterLoopSession session(s, input(), {current.pixels.data()});
  std::size_t rounds = 0, switched_at = 0;
  for (bool more = true; more && rounds < 20; ++rounds) {
    if (rounds > 0) session.set_residuals({current.pixels.data()});
    const std::size_t cycles_before = session.result().stop.major_cycles;
    const gc::OuterLoopRound r = session.clean(0.0, kRoundGain, 100000, nullptr);
    if (r.auto_mask_started) {
      EXPECT_EQ(switched_at, 0u) << "the phase ends once";
      switched_at = rounds + 1;
      EXPECT_TRUE(r.round_floor) << "another round is due";
      EXPECT_EQ(r.reason, gc::StopReason::kThreshold);
      EXPECT_GT(session.result().stop.major_cycles, cycles_before) << "a switch at a round's first cycle goes on";
      EXPECT_EQ(session.result().diagnostics.auto_mask_cycle, session.result().stop.major_cycles + 1)
          << "no cycle of the round that reached the level runs inside the mask";
    } else if (switched_at == 0) {
      EXPECT_EQ(session.result().diagnostics.auto_mask_cycle, 0u);
    }
    more = r.round_floor && r.components > 0;
    current = reimage(session.models()[0]);
  }
  ASSERT_GT(switched_at, 0u) << "the first phase must end mid-round on this field";
  EXPECT_GT(rounds, switched_at) << "the masked phase runs in rounds of its own";
  EXPECT_EQ(session.result().diagnostics.local_rms.dropped_at_cycle, session.result().diagnostics.auto_mask_cycle);
  EXPECT_LT(rounds, 20u);
}

// A Clark round is one WSClean 3.1 major iteration: one pass over the pixels above the round's
// threshold at its start (SubMinorLoop::Run), whatever that pass raised elsewhere left to the next
// round; so every round takes one cycle when --select-k does not cut its set.
TEST_P(OuterLoopRounds, AClarkRoundIsOnePass) {
  gc::CleanSettings s = settings();
  s.local_rms.enabled = false;
  gc::HostImage current = cube_.dirty[0];
  gc::OuterLoopSession session(s, input(), {current.pixels.data()});
  std::size_t rounds = 0, components = 0;
  for (bool more = true; more && rounds < 20; ++rounds) {
    if (rounds > 0) session.set_residuals({current.pixels.data()});
    const gc::OuterLoopRound r = session.clean(0.0, kRoundGain, 100000, nullptr);
    EXPECT_EQ(r.major_cycles, r.components > 0 ? 1u : 0u) << "round " << rounds + 1;
    components += r.components;
    more = r.round_floor && r.components > 0;
    current = reimage(session.models()[0]);
  }
  EXPECT_GE(rounds, 3u);
  EXPECT_LT(rounds, 20u);
  EXPECT_GT(components, 100u);
}

// --auto-threshold's σ is the robust noise of the round's first residual, kept for the whole round
// however many of its own cycles it takes (WSClean 3.1 estimates it once per major iteration,
// Deconvolution::Perform); --select-k 4 and a round gain of 0.99 make each round take several cycles.
TEST_P(OuterLoopRounds, AutoThresholdSigmaIsTheRoundsFirstResiduals) {
  gc::CleanSettings s = settings();
  s.local_rms.enabled = false;
  s.select_k = 4;
  gc::HostImage current = cube_.dirty[0];
  gc::OuterLoopSession session(s, input(), {current.pixels.data()});
  for (int round = 0; round < 2; ++round) {
    if (round > 0) session.set_residuals({current.pixels.data()});
    const gc::OuterLoopRound r = session.clean(0.0, 0.99, 100000, nullptr);
    EXPECT_GT(r.major_cycles, 1u) << "round " << round + 1;
    const double first = gc::robust_sigma(current.pixels);
    EXPECT_NEAR(r.noise_sigma, first, 1e-6 * first) << "round " << round + 1;
    current = reimage(session.models()[0]);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, OuterLoopRounds, ::testing::Values(gc::Device::kCpu, gc::Device::kGpu),
                         [](const auto& p) { return std::string(gc::to_string(p.param)); });

}  // namespace

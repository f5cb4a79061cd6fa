// The outer-loop session (clean/outer_loop.hpp): CLEAN as one step of an imager's major cycle.
// The "imager" here re-images exactly: each round's residual is dirty - model (x) PSF by direct
// convolution in double precision, per channel, an independent reference for the session's own
// FFT subtraction.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "clean/errors.hpp"
#include "clean/image_stats.hpp"
#include "clean/outer_loop.hpp"
#include "clean/plane_set.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/synthetic_cube.hpp"
#include "tests/support/gpu_test.hpp"

namespace gc = gpuclean::clean;
namespace gt = gpuclean::test;

namespace {

class OuterLoop : public gpuclean::test::DeviceTest {
 protected:
  gc::CleanSettings settings() const {
    gc::CleanSettings s;
    s.device = GetParam();
    s.threads = 2;
    s.auto_threshold = 0.0;
    s.threshold = 2e-3;
    s.beam_patch = 16;
    return s;
  }
};

double sum(const gc::HostImage& image) {
  double s = 0.0;
  for (float v : image.pixels) s += std::isfinite(v) ? v : 0.0;
  return s;
}

std::vector<const float*> pointers(const std::vector<gc::HostImage>& images) {
  std::vector<const float*> out;
  for (const gc::HostImage& i : images) out.push_back(i.pixels.data());
  return out;
}

// One channel of two sources (2 Jy and -1 Jy) on n x n pixels, and the session's input for it.
void make_two_sources(gt::SyntheticCube& cube, std::size_t n) {  // in place: its planes point into it
  gt::make_cube(cube, n, 1, 0.1e9, {{30, 40, 2.0, 0.0}, {66, 60, -1.0, 0.0}});
}

gc::OuterLoopInput one_plane(const gt::SyntheticCube& cube, std::size_t n) {
  gc::OuterLoopInput in;
  in.width = in.height = n;
  in.psfs = {cube.psf[0].image};
  in.frequencies_hz = {cube.freqs[0]};
  in.weights = {1.0};
  return in;
}

// Four channels of two sources with opposite spectral indices, and a fifth channel flagged as
// WSClean flags one (weight 0, every pixel NaN). Rounds clean to half the peak, the imager
// re-images, until the session says the thresholds are reached.
TEST_P(OuterLoop, JoinedChannelsReachTheTruthOverRounds) {
  const std::size_t n = 96;
  gt::SyntheticCube cube;
  gt::make_cube(cube, n, 4, 0.4e9, {{30, 40, 2.0, -0.7}, {66, 60, 1.0, 0.8}});
  gc::HostImage flagged(n, n);
  std::fill(flagged.pixels.begin(), flagged.pixels.end(), std::numeric_limits<float>::quiet_NaN());

  gc::OuterLoopInput in;
  in.width = in.height = n;
  in.channels = 5;
  for (std::size_t c = 0; c < 5; ++c) {
    const std::size_t k = c < 2 ? c : (c == 2 ? 0 : c - 1);  // channel 2 is the flagged one
    in.psfs.push_back(cube.psf[k].image);
    in.frequencies_hz.push_back(c == 2 ? 0.5 * (cube.freqs[1] + cube.freqs[2]) : cube.freqs[k]);
    in.weights.push_back(c == 2 ? 0.0 : 1.0 + 0.1 * static_cast<double>(k));
  }
  auto residuals = [&](const std::vector<gc::HostImage>& models) {
    std::vector<gc::HostImage> out;
    for (std::size_t c = 0; c < 5; ++c) {
      if (c == 2) {
        out.push_back(flagged);
        continue;
      }
      const std::size_t k = c < 2 ? c : c - 1;
      gc::HostImage r = cube.dirty[k];
      if (!models.empty()) {
        const gc::HostImage predicted = gt::convolve_direct(models[c], cube.psf[k]);
        for (std::size_t i = 0; i < r.size(); ++i) r.pixels[i] -= predicted.pixels[i];
      }
      out.push_back(std::move(r));
    }
    return out;
  };

  const gc::CleanSettings s = settings();
  std::vector<gc::HostImage> current = residuals({});
  gc::OuterLoopSession session(s, in, pointers(current));
  std::size_t rounds = 0;
  bool more = true;
  while (more && rounds < 30) {
    if (rounds > 0) session.set_residuals(pointers(current));
    const gc::OuterLoopRound r = session.clean(0.0, 0.5, 100000, nullptr);
    ++rounds;
    EXPECT_LE(r.peak_left, std::max<double>(0.5 * r.peak, s.threshold) * 1.0001) << "round " << rounds;
    more = r.round_floor && r.components > 0;
    current = residuals(session.models());
  }
  EXPECT_GE(rounds, 3u);
  EXPECT_LT(rounds, 30u) << "the rounds must converge";
  const std::vector<gc::HostImage> models = session.models();
  ASSERT_EQ(models.size(), 5u);
  EXPECT_EQ(sum(models[2]), 0.0) << "a flagged channel gets no model";
  for (std::size_t c = 0; c < 5; ++c) {
    if (c == 2) continue;
    const std::size_t k = c < 2 ? c : c - 1;
    const double truth = cube.flux(cube.sources[0], k) + cube.flux(cube.sources[1], k);
    EXPECT_NEAR(sum(models[c]), truth, 0.02 * truth) << "channel " << c;
    double peak = 0.0;
    for (float v : current[c].pixels) peak = std::max(peak, static_cast<double>(std::abs(v)));
    EXPECT_LT(peak, 0.05) << "channel " << c << ": the re-imaged residual is cleaned";
  }
}

// One plain round holds at (1 - round_gain) x its first peak, says so, and a later round with a
// floor above the peak cleans nothing and says the thresholds rule.
TEST_P(OuterLoop, ARoundStopsAtItsFloor) {
  const std::size_t n = 96;
  gt::SyntheticCube cube;
  make_two_sources(cube, n);
  for (gc::Algorithm algorithm : {gc::Algorithm::kClark, gc::Algorithm::kHogbom}) {
    gc::CleanSettings s = settings();
    s.algorithm = algorithm;
    gc::OuterLoopSession session(s, one_plane(cube, n), {cube.dirty[0].pixels.data()});
    const gc::OuterLoopRound first = session.clean(0.0, 0.6, 100000, nullptr);
    EXPECT_TRUE(first.round_floor);
    EXPECT_GT(first.components, 0u);
    EXPECT_NEAR(first.peak, 2.0, 0.1);
    EXPECT_LE(first.peak_left, 0.4 * first.peak * 1.0001);
    EXPECT_GT(first.peak_left, 0.3 * first.peak) << "the round stops near its floor, not below it";
    const gc::OuterLoopRound held = session.clean(10.0, 0.6, 100000, nullptr);
    EXPECT_EQ(held.components, 0u);
    EXPECT_FALSE(held.round_floor);
    EXPECT_EQ(held.reason, gc::StopReason::kThreshold);
    const gc::OuterLoopRound budget = session.clean(0.0, 1.0, 7, nullptr);
    EXPECT_EQ(budget.components, 7u);
    EXPECT_EQ(budget.reason, gc::StopReason::kMaxIterations);
    EXPECT_EQ(session.result().stop.iterations, first.components + 7);
  }
}

// WSClean's -niter sets a round's budget, which may pass the niter the session was made with (its
// GPU minor-cycle engine is sized for that): the round then takes more minor cycles, not an error.
// The CPU's minor cycle has no such cap: there one cycle may do (an outer loop's Clark subtracts
// the whole PSF, so no sidelobe limit splits the round either).
TEST_P(OuterLoop, ARoundsBudgetMayExceedTheSessionsNiter) {
  const std::size_t n = 96;
  gt::SyntheticCube cube;
  make_two_sources(cube, n);
  gc::CleanSettings s = settings();
  s.niter = 20;
  gc::OuterLoopSession session(s, one_plane(cube, n), {cube.dirty[0].pixels.data()});
  const gc::OuterLoopRound r = session.clean(0.0, 1.0, 150, nullptr);
  EXPECT_GT(r.components, 20u);
  if (GetParam() == gc::Device::kGpu) {
    EXPECT_GT(r.major_cycles, 1u);  // the engine holds s.niter components a cycle
  }
  EXPECT_LE(r.components, 150u);
}

TEST(OuterLoopInput, RefusesWhatItCannotJoin) {
  const std::size_t n = 32;
  gc::HostImage psf = gt::sidelobed_psf(n), image(n, n);
  image.at(10, 10) = 1.0f;
  gc::CleanSettings s;
  s.device = gc::Device::kCpu;
  gc::OuterLoopInput both;
  both.width = both.height = n;
  both.channels = both.polarizations = 2;
  both.psfs = {psf, psf};
  both.frequencies_hz = {1e9, 2e9};
  both.weights = {1.0, 1.0};
  const float* p = image.pixels.data();
  EXPECT_THROW(gc::OuterLoopSession(s, both, {p, p, p, p}), gc::InvalidSettings);

  gc::OuterLoopInput flagged = both;
  flagged.polarizations = 1;
  flagged.weights = {0.0, 0.0};
  EXPECT_THROW(gc::OuterLoopSession(s, flagged, {p, p}), gc::InvalidInput);

  gc::OuterLoopInput small_psf = flagged;
  small_psf.weights = {1.0, 1.0};
  small_psf.psfs = {gt::sidelobed_psf(16), gt::sidelobed_psf(16)};
  EXPECT_THROW(gc::OuterLoopSession(s, small_psf, {p, p}), gc::InvalidInput);

  gc::OuterLoopInput one = small_psf;
  one.psfs = {psf, psf};
  gc::OuterLoopSession session(s, one, {p, p});
  EXPECT_THROW(session.set_residuals({p}), gc::InvalidInput) << "one residual per plane";
}

INSTANTIATE_TEST_SUITE_P(Devices, OuterLoop, ::testing::Values(gc::Device::kCpu, gc::Device::kGpu),
                         [](const auto& p) { return std::string(gc::to_string(p.param)); });

}  // namespace

// WSClean 3.1's joined-polarization image is sqrt(f sum_p r_p^2) with f = 1/2 for correlations:
// an unpolarised source of I Jy (XX = YY = I) integrates to I, so thresholds hold in Stokes I.
TEST(JoinedPolarizations, CorrelationsIntegrateToStokesI) {
  EXPECT_EQ(gc::polarization_factor({"XX", "YY"}), 0.5);
  EXPECT_EQ(gc::polarization_factor({"RR", "LL"}), 0.5);
  EXPECT_EQ(gc::polarization_factor({"XX", "XY", "YX", "YY"}), 0.5);
  EXPECT_EQ(gc::polarization_factor({"I", "Q", "U", "V"}), 1.0);
  EXPECT_EQ(gc::polarization_factor({"XX", "XX"}), 1.0) << "not a pair of correlations";
  gc::JoinedPlanes planes;
  planes.join = gc::Join::kPolarizations;
  gc::HostImage image(1, 1);
  gc::PreparedPsf psf;
  planes.planes = {{&image, &psf, 1e9, 1.0}, {&image, &psf, 1e9, 1.0}};
  planes.polarization_factor = 0.5;
  const std::vector<float> w = gc::integration_weights(planes);
  const float xx_yy[2] = {0.8f, 0.8f};
  EXPECT_FLOAT_EQ(gc::integrate(gc::Join::kPolarizations, xx_yy, 1, w), 0.8f);
  const float iv[2] = {0.8f, 0.6f};
  planes.polarization_factor = 1.0;
  EXPECT_FLOAT_EQ(gc::integrate(gc::Join::kPolarizations, iv, 1, gc::integration_weights(planes)), 1.0f);
}

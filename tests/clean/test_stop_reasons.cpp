#include <gtest/gtest.h>

#include <algorithm>

#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/errors.hpp"
#include "clean/stop_rules.hpp"
#include "tests/support/synthetic.hpp"

namespace gc = gpuclean::clean;

namespace {
gc::CleanResult run(gc::Algorithm a, const gc::CleanSettings& base, bool empty_mask = false) {
  const std::size_t n = 48;
  const auto psf = gc::prepare_psf(gpuclean::test::sidelobed_psf(n), n, n, nullptr);
  const auto dirty = gpuclean::test::dirty_of({{20, 20, 1.0f}, {30, 10, 0.5f}}, psf, n);
  gc::HostImage mask_img(n, n, empty_mask ? 0.0f : 1.0f);
  const auto mask = gc::make_clean_mask(dirty, &mask_img, 0.0);
  gc::CleanSettings s = base;
  s.algorithm = a;
  s.auto_threshold = 0.0;
  s.beam_patch = 10;
  return gc::make_deconvolver(a, gc::Device::kCpu)->run(gc::CleanProblem{dirty, psf, mask}, s, nullptr);
}
}  // namespace

class StopReasons : public ::testing::TestWithParam<gc::Algorithm> {};

TEST_P(StopReasons, Threshold) {
  gc::CleanSettings s;
  s.threshold = 0.05;
  const auto r = run(GetParam(), s);
  EXPECT_EQ(r.stop.reason, gc::StopReason::kThreshold);
  EXPECT_LE(r.stop.peak_residual, 0.05f);
}

TEST_P(StopReasons, Niter) {
  gc::CleanSettings s;
  s.niter = 7;
  const auto r = run(GetParam(), s);
  EXPECT_EQ(r.stop.reason, gc::StopReason::kMaxIterations);
  EXPECT_EQ(r.stop.iterations, 7u);
  EXPECT_EQ(r.components.list.size(), 7u);
}

TEST_P(StopReasons, NothingToClean) {
  const auto r = run(GetParam(), gc::CleanSettings{}, true);
  EXPECT_EQ(r.stop.reason, gc::StopReason::kNoCleanablePixels);
  EXPECT_EQ(r.stop.iterations, 0u);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, StopReasons, ::testing::Values(gc::Algorithm::kClark, gc::Algorithm::kHogbom),
                         [](const auto& p) { return std::string(gc::to_string(p.param)); });

TEST(StopRules, DivergenceIsARiseAboveTheLowestPeak) {
  gc::CleanSettings s;
  s.niter = 100;
  EXPECT_FALSE(gc::check_stop(true, 1.05f, 0.1, 5, s, 1.0f));
  EXPECT_EQ(gc::check_stop(true, 1.2f, 0.1, 5, s, 1.0f), gc::StopReason::kDiverged);
  EXPECT_EQ(gc::check_stop(true, 0.05f, 0.1, 5, s, 1.0f), gc::StopReason::kThreshold);
  EXPECT_EQ(gc::check_stop(true, 0.5f, 0.1, 100, s, 1.0f), gc::StopReason::kMaxIterations);
  EXPECT_EQ(gc::check_stop(false, 0.0f, 0.1, 0, s, std::nullopt), gc::StopReason::kNoCleanablePixels);
}

TEST(Settings, ValidationNamesTheOption) {
  gc::CleanSettings s;
  s.gain = 1.5;
  try {
    gc::validate(s);
    FAIL();
  } catch (const gc::InvalidSettings& e) {
    EXPECT_NE(std::string(e.what()).find("--gain"), std::string::npos);
  }
  s = {};
  s.beam_shape = gc::BeamShape{3.0, 5.0, 0.0};
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);
  EXPECT_NO_THROW(gc::validate(gc::CleanSettings{}));
  s = {};
  s.select_backend = "no-such-backend";  // refused in every build, not only where a GPU runs
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);
  s.select_backend = "cutting-plane";
  EXPECT_NO_THROW(gc::validate(s));
}

TEST(Settings, ExplicitThresholdAloneTurnsTheAutoThresholdOff) {
  gc::CleanSettings s;
  gc::apply_explicit_threshold(s, false, false);
  EXPECT_EQ(s.auto_threshold, 3.0);
  gc::apply_explicit_threshold(s, true, true);
  EXPECT_EQ(s.auto_threshold, 3.0);
  gc::apply_explicit_threshold(s, true, false);
  EXPECT_EQ(s.auto_threshold, 0.0);
  s.threshold = 0.5;
  EXPECT_EQ(gc::describe_stopping_rules(s), "--threshold 0.5; auto-threshold off; --niter 100000; divergence");
  s.auto_mask = 5.0;
  EXPECT_EQ(gc::describe_stopping_rules(s), "--threshold 0.5; auto-threshold off; --niter 100000; divergence; "
                                             "--auto-mask 5 (unmasked to 5 x robust noise, then inside the mask)");
}

// Multiscale: the divergence rule watches the residual's own peak, with room for the rise a wide
// scale's components can leave for a cycle or two.
TEST(StopRules, MultiscaleDivergenceWatchesTheResidualPeak) {
  gc::CleanSettings s;
  EXPECT_FALSE(gc::check_stop(true, 0.5f, 0.1, 5, s, 1.0f, 1.3f, gc::kMultiscaleDivergenceFactor));
  EXPECT_EQ(gc::check_stop(true, 0.5f, 0.1, 5, s, 1.0f, 1.6f, gc::kMultiscaleDivergenceFactor),
            gc::StopReason::kDiverged);
  EXPECT_EQ(gc::check_stop(true, 0.5f, 0.1, 5, s, 1.0f, 1.3f), gc::StopReason::kDiverged);  // Clark's 10%
  EXPECT_FALSE(gc::check_stop(true, 2.0f, 0.1, 5, s, 1.0f, 0.9f)) << "the watched peak, not the biased one";
}

TEST(Psf, PreparationChecksAndNormalises) {
  gc::HostImage psf = gpuclean::test::sidelobed_psf(32);
  for (float& v : psf.pixels) v *= 2.0f;
  std::string warning;
  const auto p = gc::prepare_psf(psf, 32, 32, &warning);
  EXPECT_EQ(p.peak_x, 16u);
  EXPECT_FLOAT_EQ(p.image.at(16, 16), 1.0f);
  EXPECT_NE(warning.find("normalised"), std::string::npos);
  EXPECT_THROW(gc::prepare_psf(psf, 64, 64, nullptr), gc::InvalidInput);
  psf.at(3, 3) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(gc::prepare_psf(psf, 32, 32, nullptr), gc::InvalidInput);
}

TEST(Psf, NegatedOrShiftedPeakIsRefusedUnlessUnchecked) {
  gc::HostImage negated = gpuclean::test::sidelobed_psf(32);
  for (float& v : negated.pixels) v = -v;
  ASSERT_GT(*std::max_element(negated.pixels.begin(), negated.pixels.end()), 0.0f);  // a positive sidelobe
  EXPECT_THROW(gc::prepare_psf(negated, 32, 32, nullptr), gc::InvalidInput);
  gc::PsfChecks unchecked;
  unchecked.strict = false;
  std::string warning;
  EXPECT_GT(gc::prepare_psf(negated, 32, 32, &warning, unchecked).original_peak, 0.0f);
  EXPECT_NE(warning.find("not at the centre"), std::string::npos) << warning;

  // The peak 6 pixels off the centre: refused, unless the header's CRPIX puts it there.
  gc::HostImage shifted(32, 32, 0.0f);
  shifted.at(22, 16) = 1.0f;
  shifted.at(21, 16) = shifted.at(23, 16) = 0.4f;
  EXPECT_THROW(gc::prepare_psf(shifted, 32, 32, nullptr), gc::InvalidInput);
  gc::PsfChecks header;
  header.header_peak = std::make_pair(22.0, 16.0);
  EXPECT_EQ(gc::prepare_psf(shifted, 32, 32, nullptr, header).peak_x, 22u);
  // Within the tolerance of the centre (even/odd conventions): accepted.
  gc::HostImage near(32, 32, 0.0f);
  near.at(17, 15) = 1.0f;
  EXPECT_EQ(gc::prepare_psf(near, 32, 32, nullptr).peak_x, 17u);
}

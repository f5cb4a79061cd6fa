// CLEAN on analytic cases (radler's test pattern): a dirty image built from shifted, scaled
// PSFs, cleaned with the same PSF, must give back the sources. Every case runs for both
// algorithms on the CPU and, where a GPU is usable, on the GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/image_stats.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/synthetic.hpp"

namespace gc = gpuclean::clean;
using gpuclean::test::PointSource;

namespace {

constexpr std::size_t kN = 64;

struct Variant {
  gc::Algorithm algorithm;
  gc::Device device;
};

gc::CleanSettings exact_settings(const Variant& v) {
  gc::CleanSettings s;
  s.algorithm = v.algorithm;
  s.device = v.device;
  s.gain = 0.1;
  s.niter = 5000;
  s.threshold = 1e-4;
  s.auto_threshold = 0.0;
  s.beam_patch = 12;
  s.threads = 2;
  return s;
}

struct CleanRun {
  gc::HostImage dirty;
  gc::PreparedPsf psf;
  gc::CleanResult result;
};

CleanRun clean_sources(const std::vector<PointSource>& sources, const gc::CleanSettings& s,
                  const gc::HostImage* user_mask = nullptr, bool nan_hole = false) {
  CleanRun r;
  r.psf = gc::prepare_psf(gpuclean::test::sidelobed_psf(kN), kN, kN, nullptr);
  r.dirty = gpuclean::test::dirty_of(sources, r.psf, kN);
  if (nan_hole)
    for (std::size_t y = 40; y < 44; ++y)
      for (std::size_t x = 5; x < 9; ++x) r.dirty.at(x, y) = std::numeric_limits<float>::quiet_NaN();
  const auto mask = gc::make_clean_mask(r.dirty, user_mask, s.clean_border_percent);
  auto d = gc::make_deconvolver(s.algorithm, s.device);
  r.result = d->run(gc::CleanProblem{r.dirty, r.psf, mask}, s, nullptr);
  return r;
}

// The largest |model| pixel outside the given ones.
float stray_flux(const gc::HostImage& model, const std::vector<PointSource>& allowed) {
  float worst = 0.0f;
  for (std::size_t y = 0; y < model.height; ++y)
    for (std::size_t x = 0; x < model.width; ++x) {
      bool ok = false;
      for (const auto& a : allowed) ok |= (a.x == x && a.y == y);
      if (!ok) worst = std::max(worst, std::abs(model.at(x, y)));
    }
  return worst;
}

}  // namespace

class CleanAnalytic : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    if (GetParam().device == gc::Device::kGpu && !gpuclean::cuda::has_usable_device())
      GTEST_SKIP() << "no usable CUDA device: " << gpuclean::cuda::describe_device();
  }
};

TEST_P(CleanAnalytic, PointSourceAtTheRightPixelWithinOnePercent) {
  const std::vector<PointSource> src = {{20, 30, 2.0f}};
  const CleanRun r = clean_sources(src, exact_settings(GetParam()));
  EXPECT_EQ(r.result.stop.reason, gc::StopReason::kThreshold);
  EXPECT_NEAR(r.result.images.model.at(20, 30), 2.0f, 0.01f * 2.0f);
  EXPECT_NEAR(gc::total_flux(r.result.images.model.pixels), 2.0, 0.01 * 2.0);
  EXPECT_LT(stray_flux(r.result.images.model, src), 1e-3f);
  EXPECT_EQ(r.result.components.list.front().x, 20u);
  EXPECT_EQ(r.result.components.list.front().y, 30u);
}

TEST_P(CleanAnalytic, TwoSources) {
  const std::vector<PointSource> src = {{20, 20, 1.0f}, {40, 35, 0.6f}};
  const CleanRun r = clean_sources(src, exact_settings(GetParam()));
  EXPECT_NEAR(r.result.images.model.at(20, 20), 1.0f, 0.01f);
  EXPECT_NEAR(r.result.images.model.at(40, 35), 0.6f, 0.006f);
  EXPECT_LT(stray_flux(r.result.images.model, src), 5e-3f);
}

TEST_P(CleanAnalytic, NegativeSource) {
  const std::vector<PointSource> src = {{10, 10, 1.0f}, {30, 30, -0.8f}};
  const CleanRun r = clean_sources(src, exact_settings(GetParam()));
  EXPECT_NEAR(r.result.images.model.at(30, 30), -0.8f, 0.008f);
  EXPECT_NEAR(r.result.images.model.at(10, 10), 1.0f, 0.01f);
}

TEST_P(CleanAnalytic, NoNegativeLeavesNegativeSourcesInTheResidual) {
  const std::vector<PointSource> src = {{10, 10, 1.0f}, {30, 30, -0.8f}};
  gc::CleanSettings s = exact_settings(GetParam());
  s.allow_negative = false;
  const CleanRun r = clean_sources(src, s);
  for (float v : r.result.images.model.pixels) EXPECT_GE(v, 0.0f);
  EXPECT_NEAR(r.result.images.residual.at(30, 30), -0.8f, 0.05f);
  EXPECT_NEAR(r.result.images.model.at(10, 10), 1.0f, 0.05f);
}

TEST_P(CleanAnalytic, MaskConfinesComponents) {
  const std::vector<PointSource> src = {{10, 10, 1.0f}, {45, 45, 1.0f}};
  gc::HostImage mask(kN, kN, 0.0f);
  for (std::size_t y = 5; y < 16; ++y)
    for (std::size_t x = 5; x < 16; ++x) mask.at(x, y) = 1.0f;
  const CleanRun r = clean_sources(src, exact_settings(GetParam()), &mask);
  for (const auto& c : r.result.components.list) {
    EXPECT_GE(c.x, 5u);
    EXPECT_LT(c.x, 16u);
    EXPECT_GE(c.y, 5u);
    EXPECT_LT(c.y, 16u);
  }
  EXPECT_GT(r.result.images.model.at(10, 10), 0.9f);
  EXPECT_NEAR(r.result.images.residual.at(45, 45), 1.0f, 0.05f);
}

TEST_P(CleanAnalytic, NaNPixelsStayNaNAndNeverGetComponents) {
  const std::vector<PointSource> src = {{7, 42, 1.0f}, {30, 20, 1.0f}};  // the first lies in the hole
  const CleanRun r = clean_sources(src, exact_settings(GetParam()), nullptr, true);
  for (std::size_t y = 40; y < 44; ++y)
    for (std::size_t x = 5; x < 9; ++x) {
      EXPECT_TRUE(std::isnan(r.result.images.residual.at(x, y)));
      EXPECT_EQ(r.result.images.model.at(x, y), 0.0f);
    }
  EXPECT_NEAR(r.result.images.model.at(30, 20), 1.0f, 0.05f);
}

TEST_P(CleanAnalytic, ResidualIsDirtyMinusModelConvolvedWithThePsf) {
  std::vector<PointSource> src;
  for (std::size_t i = 0; i < 12; ++i) src.push_back({(i * 37) % 60 + 2, (i * 23) % 58 + 3, 0.1f + 0.15f * static_cast<float>(i % 5)});
  gc::CleanSettings s = exact_settings(GetParam());
  s.niter = 300;
  const CleanRun r = clean_sources(src, s);
  const gc::HostImage model_psf = gpuclean::test::convolve_direct(r.result.images.model, r.psf);
  double worst = 0.0;
  for (std::size_t i = 0; i < r.dirty.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(r.dirty.pixels[i]) - model_psf.pixels[i] - r.result.images.residual.pixels[i]));
  // Float precision relative to the brightest dirty pixel (about 1.4).
  EXPECT_LT(worst, 2e-5) << "largest deviation of the residual from dirty - model (x) PSF";
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CleanAnalytic,
                         ::testing::Values(Variant{gc::Algorithm::kClark, gc::Device::kCpu},
                                           Variant{gc::Algorithm::kHogbom, gc::Device::kCpu},
                                           Variant{gc::Algorithm::kClark, gc::Device::kGpu},
                                           Variant{gc::Algorithm::kHogbom, gc::Device::kGpu}),
                         [](const auto& p) {
                           return std::string(gc::to_string(p.param.algorithm)) + "_" +
                                  std::string(gc::to_string(p.param.device));
                         });

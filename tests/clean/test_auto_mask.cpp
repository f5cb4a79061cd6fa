// --auto-mask: the footprints and the per-scale masks, the phase rule, and the point of it: on a
// field of faint point sources in noise, cleaning to 1 sigma without a mask puts more than 1% of
// the sources' flux onto noise, and with the auto-mask (5 sigma, then 1 sigma inside) no more
// than 1%. CPU and, where a GPU is usable, GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "clean/auto_mask.hpp"
#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/errors.hpp"
#include "clean/scale_kernels.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/synthetic.hpp"
#include "tests/support/gpu_test.hpp"

namespace gc = gpuclean::clean;
using gpuclean::test::PointSource;

TEST(AutoMask, FootprintsAndPerScaleMasks) {
  const gc::HostImage delta = gc::scale_kernel(0.0, gc::ScaleShape::kTaperedQuadratic, 64);
  const gc::HostImage wide = gc::scale_kernel(6.0, gc::ScaleShape::kTaperedQuadratic, 64);
  EXPECT_EQ(gc::kernel_footprint(delta).size(), 1u);
  const auto fp = gc::kernel_footprint(wide);
  EXPECT_GT(fp.size(), 9u);
  EXPECT_LE(fp.size(), wide.size());
  std::vector<std::uint8_t> base(32 * 32, 1);
  base[5 * 32 + 5] = 0;  // the user's mask still rules
  const std::vector<gc::Component> comps = {{5, 5, 1.0f, 0}, {6, 5, 1.0f, 0}, {20, 20, 1.0f, 1}};
  const auto masks = gc::auto_masks({&delta, &wide}, comps, base, 32, 32);
  ASSERT_EQ(masks.size(), 2u);
  EXPECT_EQ(std::count(masks[0].begin(), masks[0].end(), 1), 1);  // (5,5) is outside the user's mask
  EXPECT_EQ(masks[0][5 * 32 + 6], 1);
  EXPECT_EQ(static_cast<std::size_t>(std::count(masks[1].begin(), masks[1].end(), 1)), fp.size());
  EXPECT_EQ(masks[1][20 * 32 + 20], 1);
  EXPECT_EQ(masks[1][5 * 32 + 6], 0);
}

TEST(AutoMask, PhaseThresholdsAndValidation) {
  gc::CleanSettings s;
  s.auto_threshold = 1.0;
  s.auto_mask = 5.0;
  gc::AutoMaskPhase phase(s);
  EXPECT_TRUE(phase.first_phase());
  EXPECT_DOUBLE_EQ(phase.threshold(0.1, 0.1), 0.5);
  EXPECT_DOUBLE_EQ(phase.threshold(0.7, 0.1), 0.7);  // --threshold above the mask level
  phase.switch_to_mask();
  EXPECT_DOUBLE_EQ(phase.threshold(0.1, 0.1), 0.1);
  EXPECT_NO_THROW(gc::validate(s));
  s.auto_mask = 1.0;
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);
  s.auto_mask = -1.0;
  EXPECT_THROW(gc::validate(s), gc::InvalidSettings);
}

namespace {

constexpr std::size_t kN = 192;
constexpr double kNoise = 1e-3;

struct Field {
  std::vector<PointSource> sources;
  gc::HostImage dirty;
  gc::PreparedPsf psf;
  std::vector<std::uint8_t> mask;
};

Field faint_field() {
  Field f;
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::size_t> pos(12, kN - 13);
  std::uniform_real_distribution<double> snr(8.0, 40.0);
  for (int i = 0; i < 25; ++i) f.sources.push_back({pos(rng), pos(rng), static_cast<float>(snr(rng) * kNoise)});
  f.psf = gc::prepare_psf(gpuclean::test::sidelobed_psf(kN), kN, kN, nullptr);
  f.dirty = gpuclean::test::dirty_of(f.sources, f.psf, kN);
  std::normal_distribution<double> noise(0.0, kNoise);
  for (float& v : f.dirty.pixels) v += static_cast<float>(noise(rng));
  f.mask = gc::make_clean_mask(f.dirty, nullptr, 0.0);
  return f;
}

// Clean down to 1 sigma (no mask unless the test adds one).
gc::CleanSettings one_sigma(gc::Device device) {
  gc::CleanSettings s;
  s.device = device;
  s.niter = 20000;
  s.auto_threshold = 1.0;
  s.beam_patch = 16;
  s.threads = 2;
  return s;
}

// |model| farther than 3 pixels from every source, over the sources' total flux.
double spurious_fraction(const Field& f, const gc::HostImage& model) {
  double spurious = 0.0, total = 0.0;
  for (const auto& s : f.sources) total += s.flux;
  for (std::size_t y = 0; y < kN; ++y)
    for (std::size_t x = 0; x < kN; ++x) {
      bool near = false;
      for (const auto& s : f.sources) near |= std::abs(static_cast<long>(x) - static_cast<long>(s.x)) <= 3 &&
                                              std::abs(static_cast<long>(y) - static_cast<long>(s.y)) <= 3;
      if (!near) spurious += std::abs(model.at(x, y));
    }
  return spurious / total;
}

// One deconvolver's run of `f` with `s` as given (no mask), and with --auto-mask 5 added.
struct PlainAndMasked {
  gc::CleanResult plain, masked;
};
PlainAndMasked plain_and_masked(const Field& f, gc::CleanSettings s) {
  auto d = gc::make_deconvolver(s.algorithm, s.device);
  PlainAndMasked r;
  r.plain = d->run(gc::CleanProblem{f.dirty, f.psf, f.mask}, s, nullptr);
  s.auto_mask = 5.0;
  r.masked = d->run(gc::CleanProblem{f.dirty, f.psf, f.mask}, s, nullptr);
  return r;
}

// The point of the mask: without it more than 1% of the flux lands on noise, with it no more
// than 1%; the one scale's mask comes after the first cycle and is smaller than the sources'
// 7x7 boxes together.
void expect_mask_keeps_to_sources(const Field& f, const PlainAndMasked& r) {
  EXPECT_GT(spurious_fraction(f, r.plain.images.model), 0.01) << "without a mask, 1 sigma cleans the noise";
  EXPECT_LE(spurious_fraction(f, r.masked.images.model), 0.01);
  EXPECT_GT(r.masked.diagnostics.auto_mask_cycle, 1u);
  ASSERT_EQ(r.masked.diagnostics.auto_mask_pixels.size(), 1u);
  EXPECT_LT(r.masked.diagnostics.auto_mask_pixels[0], 25u * 49u);
}

}  // namespace

class AutoMaskField : public gpuclean::test::DeviceTest {};

TEST_P(AutoMaskField, CleaningToOneSigmaStaysOnTheSources) {
  const Field f = faint_field();
  const PlainAndMasked r = plain_and_masked(f, one_sigma(GetParam()));
  ASSERT_NO_FATAL_FAILURE(expect_mask_keeps_to_sources(f, r));
  EXPECT_GT(r.masked.diagnostics.auto_mask_pixels[0], 0u);
  std::printf("  spurious flux: %.2f%% without a mask, %.2f%% with --auto-mask 5; mask %zu pixels from cycle %zu\n",
              100 * spurious_fraction(f, r.plain.images.model), 100 * spurious_fraction(f, r.masked.images.model),
              r.masked.diagnostics.auto_mask_pixels[0], r.masked.diagnostics.auto_mask_cycle);
}

TEST_P(AutoMaskField, WorksWithMultiscale) {
  const Field f = faint_field();
  gc::CleanSettings s = one_sigma(GetParam());
  s.auto_mask = 5.0;
  s.multiscale.enabled = true;
  auto d = gc::make_deconvolver(s.algorithm, s.device);
  const gc::CleanResult r = d->run(gc::CleanProblem{f.dirty, f.psf, f.mask}, s, nullptr);
  EXPECT_LE(spurious_fraction(f, r.images.model), 0.01);
  EXPECT_EQ(r.diagnostics.auto_mask_pixels.size(), r.components.scales.size());
}

// Högbom runs on the same major-cycle driver, so it has the auto-mask too (it had none before).
TEST_P(AutoMaskField, HogbomHasItThroughTheDriver) {
  const Field f = faint_field();
  gc::CleanSettings s = one_sigma(GetParam());
  s.algorithm = gc::Algorithm::kHogbom;
  s.niter = 5000;
  const PlainAndMasked r = plain_and_masked(f, s);
  ASSERT_NO_FATAL_FAILURE(expect_mask_keeps_to_sources(f, r));
  if (GetParam() == gc::Device::kGpu) {  // and the GPU's equals the CPU's
    s.auto_mask = 5.0;
    s.device = gc::Device::kCpu;
    const gc::CleanResult cpu =
        gc::make_deconvolver(s.algorithm, s.device)->run(gc::CleanProblem{f.dirty, f.psf, f.mask}, s, nullptr);
    EXPECT_EQ(cpu.diagnostics.auto_mask_cycle, r.masked.diagnostics.auto_mask_cycle);
    EXPECT_EQ(cpu.diagnostics.auto_mask_pixels, r.masked.diagnostics.auto_mask_pixels);
    EXPECT_EQ(cpu.stop.iterations, r.masked.stop.iterations);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, AutoMaskField, ::testing::Values(gc::Device::kCpu, gc::Device::kGpu),
                         [](const auto& p) { return std::string(gc::to_string(p.param)); });

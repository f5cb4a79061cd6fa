// The major-cycle driver (clean/major_cycle.hpp): a toy algorithm of one small file and one table
// row (toy_steps.cpp) plugs into it and gets the stopping rules, the mgain limit and the
// auto-mask; and a run driven one major cycle at a time is the whole run, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <random>

#include "clean/clark_cpu.hpp"
#include "clean/clean_mask.hpp"
#include "clean/image_stats.hpp"
#include "clean/major_cycle.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/synthetic.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/clean/toy_steps.hpp"

#ifdef GPUCLEAN_HAVE_CUDA
#include "clean/gpu/clark_gpu.hpp"
#include "clean/gpu/gpu_resources.hpp"
#endif

namespace gc = gpuclean::clean;

namespace {

struct Image {
  gc::HostImage dirty;
  gc::PreparedPsf psf;
  std::vector<std::uint8_t> mask;
};

Image delta_field() {
  Image f;
  f.dirty = gc::HostImage(64, 64);
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(0.0f, 0.01f);
  for (float& v : f.dirty.pixels) v = noise(rng);
  f.dirty.at(10, 12) = 5.0f;
  f.dirty.at(40, 33) = -3.0f;
  f.psf = gc::PreparedPsf{gc::HostImage(1, 1, 1.0f), 0, 0, 1.0f};  // the toy never reads it
  f.mask = gc::make_clean_mask(f.dirty, nullptr, 0.0);
  return f;
}

gc::CleanResult run_toy(const Image& f, const gc::CleanSettings& s, const gc::CycleCallback& on_cycle = nullptr) {
  const gc::CleanProblem problem{f.dirty, f.psf, f.mask};
  return gc::make_deconvolver(gpuclean::test::delta_psf_row(), gc::Device::kCpu)->run(problem, s, on_cycle);
}

}  // namespace

TEST(MajorCycleDriver, AToyAlgorithmStopsAtTheThresholdAndTheDriverKeepsTheBooks) {
  const Image f = delta_field();
  gc::CleanSettings s;
  s.auto_threshold = 0.0;
  s.threshold = 0.05;
  s.mgain = 0.5;
  std::vector<gc::CycleReport> reports;
  const gc::CleanResult r = run_toy(f, s, [&](const gc::CycleReport& c) { reports.push_back(c); });
  EXPECT_EQ(r.stop.reason, gc::StopReason::kThreshold);
  EXPECT_LE(r.stop.peak_residual, 0.05f);
  EXPECT_EQ(r.stop.iterations, r.components.list.size());
  // Each major cycle ends once the peak fell by mgain (or reached the threshold): the peaks at
  // least halve from cycle to cycle.
  ASSERT_GT(reports.size(), 3u);
  for (std::size_t c = 1; c < reports.size(); ++c)
    EXPECT_LE(reports[c].peak, std::max(0.5f * reports[c - 1].peak, 0.05f) + 1e-6f);
  EXPECT_EQ(r.stop.major_cycles, reports.size());
  // A delta PSF's CLEAN is exact: model + residual is the dirty image.
  for (std::size_t i = 0; i < f.dirty.size(); ++i)
    EXPECT_NEAR(r.images.model.pixels[i] + r.images.residual.pixels[i], f.dirty.pixels[i], 1e-6f);
}

TEST(MajorCycleDriver, AToyAlgorithmHonoursNiterExactly) {
  const Image f = delta_field();
  gc::CleanSettings s;
  s.niter = 17;
  s.auto_threshold = 0.0;
  s.mgain = 0.9;
  const gc::CleanResult r = run_toy(f, s);
  EXPECT_EQ(r.stop.reason, gc::StopReason::kMaxIterations);
  EXPECT_EQ(r.stop.iterations, 17u);
  EXPECT_EQ(r.components.list.size(), 17u);
}

TEST(MajorCycleDriver, AToyAlgorithmGetsTheAutoMask) {
  const Image f = delta_field();
  gc::CleanSettings s;
  s.auto_threshold = 1.0;
  s.auto_mask = 20.0;  // the two sources are far above 20 sigma, the noise is not
  const gc::CleanResult r = run_toy(f, s);
  ASSERT_GT(r.diagnostics.auto_mask_cycle, 1u);
  ASSERT_EQ(r.diagnostics.auto_mask_pixels.size(), 1u);
  EXPECT_EQ(r.diagnostics.auto_mask_pixels[0], 2u);  // one delta footprint per source
  for (const gc::Component& c : r.components.list)
    EXPECT_TRUE((c.x == 10 && c.y == 12) || (c.x == 40 && c.y == 33)) << c.x << "," << c.y;
}

// What an outer loop (re-imaging between major cycles) needs: next() one cycle at a time, then
// finish, is the whole run.
TEST(MajorCycleDriver, OneCycleAtATimeIsTheWholeRun) {
  const std::size_t n = 128;
  gc::HostImage sky(n, n);
  gpuclean::test::add_gaussian(sky, 40.0, 50.0, 4.0, 2.0);
  sky.at(90, 80) = 1.5f;
  const gc::PreparedPsf psf = gc::prepare_psf(gpuclean::test::sidelobed_psf(n), n, n, nullptr);
  const gc::HostImage dirty = gpuclean::test::convolve_direct(sky, psf);
  const std::vector<std::uint8_t> mask = gc::make_clean_mask(dirty, nullptr, 0.0);
  for (const bool multiscale : {false, true}) {
    gc::CleanSettings s;
    s.threads = 2;
    s.mgain = 0.6;
    s.niter = 3000;
    s.beam_patch = 16;
    s.multiscale.enabled = multiscale;
    const gc::CleanProblem problem{dirty, psf, mask};
    const gc::CleanResult whole = gc::make_deconvolver(s.algorithm, gc::Device::kCpu)->run(problem, s, nullptr);

    const auto steps = gc::make_clark_steps_cpu(problem, s);
    gc::MajorCycleDriver driver(*steps, problem, s, nullptr);
    gc::CleanResult stepped;
    std::size_t cycles = 0;
    while (driver.next(stepped)) ++cycles;
    EXPECT_FALSE(driver.next(stepped)) << "a stopped run stays stopped";
    driver.finish(stepped);
    EXPECT_GT(cycles, 1u);
    ASSERT_EQ(stepped.components.list.size(), whole.components.list.size()) << "multiscale " << multiscale;
    for (std::size_t i = 0; i < whole.components.list.size(); ++i) {
      EXPECT_EQ(stepped.components.list[i].x, whole.components.list[i].x);
      EXPECT_EQ(stepped.components.list[i].y, whole.components.list[i].y);
      EXPECT_EQ(stepped.components.list[i].flux, whole.components.list[i].flux);
      EXPECT_EQ(stepped.components.list[i].scale, whole.components.list[i].scale);
    }
    EXPECT_EQ(stepped.stop.reason, whole.stop.reason);
    EXPECT_EQ(stepped.images.residual.pixels, whole.images.residual.pixels);
  }
}

// An outer loop that re-images between rounds, as WSClean's major cycle does: each round hands
// the steps a residual made outside (here dirty - model (x) PSF by direct convolution, an
// independent reference) and cleans it down to half its peak; the loop ends at the threshold with
// the plain run's result.
class OutsideResidual : public gpuclean::test::DeviceTest {};

TEST_P(OutsideResidual, AnOuterLoopReachesThePlainRunsResult) {
  const std::size_t n = 128;
  gc::HostImage sky(n, n);
  sky.at(40, 50) = 2.0f;
  sky.at(90, 80) = 1.5f;
  sky.at(60, 20) = -0.7f;
  const gc::PreparedPsf psf = gc::prepare_psf(gpuclean::test::sidelobed_psf(n), n, n, nullptr);
  const gc::HostImage dirty = gpuclean::test::convolve_direct(sky, psf);
  const std::vector<std::uint8_t> mask = gc::make_clean_mask(dirty, nullptr, 0.0);
  gc::CleanSettings s;
  s.device = GetParam();
  s.threads = 2;
  s.auto_threshold = 0.0;
  s.threshold = 2e-3;
  s.beam_patch = 16;
  const gc::CleanProblem problem{dirty, psf, mask};
  const gc::CleanResult plain = gc::make_deconvolver(s.algorithm, s.device)->run(problem, s, nullptr);

#ifdef GPUCLEAN_HAVE_CUDA
  std::unique_ptr<gc::gpu::GpuResources> resources;  // outlives the steps made on it
#endif
  std::unique_ptr<gc::MajorCycleSteps> steps;
#ifdef GPUCLEAN_HAVE_CUDA
  if (s.device == gc::Device::kGpu) {
    resources = std::make_unique<gc::gpu::GpuResources>();
    steps = gc::gpu::make_clark_steps_gpu(*resources, problem, s);
  }
#endif
  if (!steps) steps = gc::make_clark_steps_cpu(problem, s);
  gc::MajorCycleDriver driver(*steps, problem, s, nullptr);
  gc::CleanResult r;
  gc::HostImage residual = dirty;
  std::size_t rounds = 0;
  auto peak_of = [](const gc::HostImage& img) {
    float peak = 0.0f;
    for (float v : img.pixels) peak = std::max(peak, std::abs(v));
    return peak;
  };
  while (peak_of(residual) > s.threshold && rounds < 20) {
    ++rounds;
    steps->set_residuals({residual.pixels.data()});
    driver.resume(0.5 * peak_of(residual));
    while (driver.next(r)) {
    }
    const gc::HostImage model = steps->model_images().at(0);
    const gc::HostImage predicted = gpuclean::test::convolve_direct(model, psf);  // "re-imaging"
    for (std::size_t i = 0; i < residual.size(); ++i) residual.pixels[i] = dirty.pixels[i] - predicted.pixels[i];
  }
  driver.finish(r);
  std::printf("  %zu rounds, %zu components (plain run %zu); flux %.5f (plain %.5f); residual rms %.3e (plain %.3e)\n",
              rounds, r.stop.iterations, plain.stop.iterations, gc::total_flux(r.images.model.pixels),
              gc::total_flux(plain.images.model.pixels), gc::rms(residual.pixels), gc::rms(plain.images.residual.pixels));
  EXPECT_GE(rounds, 2u);
  EXPECT_LE(peak_of(residual), s.threshold);
  EXPECT_EQ(r.stop.iterations, r.components.list.size());
  const double flux = gc::total_flux(r.images.model.pixels), plain_flux = gc::total_flux(plain.images.model.pixels);
  EXPECT_NEAR(flux, plain_flux, 0.01 * std::abs(plain_flux));
  EXPECT_NEAR(flux, 2.0 + 1.5 - 0.7, 0.02 * 2.8);
  EXPECT_NEAR(gc::rms(residual.pixels), gc::rms(plain.images.residual.pixels), 0.05 * gc::rms(plain.images.residual.pixels));
}

INSTANTIATE_TEST_SUITE_P(Devices, OutsideResidual, ::testing::Values(gc::Device::kCpu, gc::Device::kGpu),
                         [](const auto& p) { return std::string(gc::to_string(p.param)); });

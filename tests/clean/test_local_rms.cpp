// --local-rms: the noise map against a direct 2-D sum and against known noise levels, its
// weights, and the point of it: on a field whose right half is ten times noisier, thresholds
// against the local noise clean the sources of both halves and leave the noisy half's noise (and
// a source below 5 local sigma there) alone, where one global noise level cleans that noise.
// CPU, and where a GPU is usable: the GPU map equals the CPU map to the bit, and GPU CLEAN with
// --local-rms makes the CPU's first cycle and final statistics (the map is remade each time the
// residual's peak has halved).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/local_rms.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/synthetic.hpp"
#include "tests/support/gpu_test.hpp"
#ifdef GPUCLEAN_HAVE_CUDA
#include "clean/gpu/local_rms_gpu.hpp"
#include "select/cuda/device_buffer.hpp"
#endif

namespace gc = gpuclean::clean;
using gpuclean::test::PointSource;

namespace {

gc::HostImage noise_image(std::size_t w, std::size_t h, double left_sigma, double right_sigma, unsigned seed) {
  gc::HostImage img(w, h);
  std::mt19937 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) img.at(x, y) = static_cast<float>(z(rng) * (x < w / 2 ? left_sigma : right_sigma));
  return img;
}

// The map by its definition: a direct 2-D sum over the square of the taps' reach.
double direct_rms(const gc::HostImage& img, std::size_t x, std::size_t y, const std::vector<double>& taps) {
  const auto r = static_cast<std::ptrdiff_t>(taps.size() / 2);
  double s = 0.0, c = 0.0, total = 0.0;
  for (double t : taps) total += t;
  for (std::ptrdiff_t dy = -r; dy <= r; ++dy)
    for (std::ptrdiff_t dx = -r; dx <= r; ++dx) {
      const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(x) + dx, py = static_cast<std::ptrdiff_t>(y) + dy;
      if (px < 0 || py < 0 || px >= static_cast<std::ptrdiff_t>(img.width) || py >= static_cast<std::ptrdiff_t>(img.height))
        continue;
      const double v = img.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
      if (!std::isfinite(v)) continue;
      const double wgt = taps[static_cast<std::size_t>(dx + r)] * taps[static_cast<std::size_t>(dy + r)];
      s += wgt * v * v;
      c += wgt;
    }
  return c >= gc::kLocalRmsMinCoverage * total * total ? std::sqrt(s / c) : 0.0;
}

// A periodic window (radler's map, WSClean 3.3-3.7) by its definition: the direct 2-D sum with
// the coordinates taken modulo the image's size, over offsets within half the size, divided by
// the whole window's weight (NaN pixels as 0).
double direct_periodic_rms(const gc::HostImage& img, std::size_t x, std::size_t y, const std::vector<double>& taps) {
  const auto r = static_cast<std::ptrdiff_t>(taps.size() / 2);
  const auto w = static_cast<std::ptrdiff_t>(img.width), h = static_cast<std::ptrdiff_t>(img.height);
  const std::ptrdiff_t rx = std::min(r, (w - 1) / 2), ry = std::min(r, (h - 1) / 2);
  double s = 0.0, c = 0.0;
  for (std::ptrdiff_t dy = -ry; dy <= ry; ++dy)
    for (std::ptrdiff_t dx = -rx; dx <= rx; ++dx) {
      const std::ptrdiff_t px = ((static_cast<std::ptrdiff_t>(x) + dx) % w + w) % w;
      const std::ptrdiff_t py = ((static_cast<std::ptrdiff_t>(y) + dy) % h + h) % h;
      const double v = img.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
      const double wgt = taps[static_cast<std::size_t>(dx + r)] * taps[static_cast<std::size_t>(dy + r)];
      if (std::isfinite(v)) s += wgt * v * v;
      c += wgt;
    }
  return std::sqrt(s / c);
}

}  // namespace

TEST(LocalRms, PeriodicMapEqualsTheWrappedDirectSum) {
  gc::HostImage img = noise_image(41, 29, 1.0, 3.0, 7);
  img.at(1, 1) = 50.0f;  // a bright pixel near a corner: the opposite edges must see it
  for (std::size_t y = 10; y < 14; ++y)
    for (std::size_t x = 3; x < 9; ++x) img.at(x, y) = NAN;
  for (double fwhm : {6.0, 30.0}) {  // 30: the taps reach past half the image, and are cut there
    const std::vector<double> taps = gc::local_rms_taps(fwhm);
    const gc::HostImage map = gc::local_rms_map(img, taps, 2, true);
    for (std::size_t y = 0; y < img.height; ++y)
      for (std::size_t x = 0; x < img.width; ++x) {
        const double want = direct_periodic_rms(img, x, y, taps);
        ASSERT_NEAR(map.at(x, y), want, 1e-6 * want) << fwhm << ": " << x << "," << y;
      }
  }
  // The corner's source raises the map at the far corner too, unlike the edge-bounded window's.
  const std::vector<double> taps = gc::local_rms_taps(6.0);
  EXPECT_GT(gc::local_rms_map(img, taps, 1, true).at(40, 28), 2.0 * gc::local_rms_map(img, taps, 1).at(40, 28));
}

TEST(LocalRms, TapsAreTheWindowsGaussian) {
  const std::vector<double> taps = gc::local_rms_taps(10.0);  // sigma = 4.2466
  const std::size_t r = taps.size() / 2;
  EXPECT_EQ(r, 17u);  // ceil(4 sigma)
  EXPECT_DOUBLE_EQ(taps[r], 1.0);
  EXPECT_NEAR(taps[r + 5], 0.5, 1e-12);  // half power at half the FWHM
  EXPECT_DOUBLE_EQ(taps[r - 3], taps[r + 3]);
}

TEST(LocalRms, MapEqualsTheDirectSumWithNaNsAndEdges) {
  gc::HostImage img = noise_image(41, 29, 1.0, 3.0, 5);
  for (std::size_t y = 10; y < 14; ++y)
    for (std::size_t x = 3; x < 9; ++x) img.at(x, y) = NAN;
  const std::vector<double> taps = gc::local_rms_taps(6.0);
  const gc::HostImage map = gc::local_rms_map(img, taps, 2);
  for (std::size_t y = 0; y < img.height; ++y)
    for (std::size_t x = 0; x < img.width; ++x) {
      const double want = direct_rms(img, x, y, taps);
      ASSERT_NEAR(map.at(x, y), want, 1e-6 * want) << x << "," << y;
      ASSERT_TRUE(std::isfinite(map.at(x, y)));
    }
}

TEST(LocalRms, MapFollowsTheNoiseOfEachRegionToTheEdges) {
  constexpr std::size_t n = 256;
  const gc::HostImage img = noise_image(n, n, 1.0, 5.0, 11);
  const gc::HostImage map = gc::local_rms_map(img, gc::local_rms_taps(16.0), 2);
  for (std::size_t y = 0; y < n; y += 5) {
    for (std::size_t x : {0ul, 20ul, 60ul, 90ul}) EXPECT_NEAR(map.at(x, y), 1.0, 0.15) << x << "," << y;
    for (std::size_t x : {165ul, 200ul, 240ul, 255ul}) EXPECT_NEAR(map.at(x, y), 5.0, 0.75) << x << "," << y;
  }
  const gc::LocalRmsWeights w = gc::local_rms_weights(map);
  EXPECT_GT(w.min_rms, 0.8);
  EXPECT_LT(w.min_rms, 1.0);
  EXPECT_GT(w.max_rms, 5.0);
  EXPECT_NEAR(w.weights[100 * n + 240], w.min_rms / 5.0, 0.04);
  float largest = 0.0f;
  for (float v : w.weights) largest = std::max(largest, v);
  EXPECT_FLOAT_EQ(largest, 1.0f);
}

TEST(LocalRms, MadMapFollowsTheNoiseAndIgnoresSources) {
  constexpr std::size_t n = 256;
  gc::HostImage img = noise_image(n, n, 1.0, 5.0, 13);
  for (std::size_t k = 0; k < 12; ++k) img.at(20 + 18 * k, 40 + 15 * k) += 300.0f;  // bright unresolved sources
  gc::LocalRmsSettings mad;
  mad.method = gc::LocalRmsMethod::kMad;
  const gc::HostImage robust = gc::local_noise_map(img, mad, 24.0, 2);
  const gc::HostImage rms = gc::local_noise_map(img, gc::LocalRmsSettings{}, 24.0, 2);
  for (std::size_t k = 0; k < 12; ++k) {
    const std::size_t x = 20 + 18 * k, y = 40 + 15 * k;
    const double sigma = x < n / 2 ? 1.0 : 5.0;
    if (x > n / 2 - 24 && x < n / 2 + 24) continue;  // the boxes straddle the two halves there
    EXPECT_NEAR(robust.at(x, y), sigma, 0.15 * sigma) << x << "," << y;
    EXPECT_GT(rms.at(x, y), 2.0 * sigma) << x << "," << y;  // the RMS is raised by the source
  }
  // At a box centre the map is that box's value.
  const gc::MadGrid g = gc::mad_grid(n, n, 24.0);
  EXPECT_EQ(g.box, 24u);
  EXPECT_EQ(g.step, 12u);
  EXPECT_EQ(g.cx.back(), n - 1);
  const std::vector<float> sig = gc::mad_box_sigmas(img, g, 2);
  for (std::size_t j = 0; j < g.cy.size(); j += 3)
    for (std::size_t i = 0; i < g.cx.size(); i += 3)
      ASSERT_EQ(robust.at(g.cx[i], g.cy[j]), sig[j * g.cx.size() + i]) << i << "," << j;
}

TEST(LocalRms, EmptyCoverageGivesZeroWeights) {
  gc::HostImage img(64, 64);
  for (float& v : img.pixels) v = NAN;
  img.at(2, 2) = 1.0f;  // one finite pixel: below the window's 1% coverage almost everywhere
  const gc::HostImage map = gc::local_rms_map(img, gc::local_rms_taps(20.0), 1);
  const gc::LocalRmsWeights w = gc::local_rms_weights(map);
  EXPECT_EQ(w.min_rms, 0.0);
  for (float v : w.weights) ASSERT_EQ(v, 0.0f);
}

namespace {

constexpr std::size_t kN = 256;
constexpr double kQuiet = 1e-3, kNoisy = 1e-2;

struct Field {
  std::vector<PointSource> sources;  // A (quiet half), B (noisy half, 3 local sigma), C (noisy, bright)
  gc::HostImage dirty;
  gc::PreparedPsf psf;
  std::vector<std::uint8_t> mask;
};

Field two_noise_field() {
  Field f;
  f.sources = {{64, 128, 0.03f}, {192, 64, 0.03f}, {192, 192, 0.15f}};
  f.psf = gc::prepare_psf(gpuclean::test::sidelobed_psf(kN), kN, kN, nullptr);
  f.dirty = gpuclean::test::dirty_of(f.sources, f.psf, kN);
  const gc::HostImage noise = noise_image(kN, kN, kQuiet, kNoisy, 21);
  for (std::size_t i = 0; i < f.dirty.size(); ++i) f.dirty.pixels[i] += noise.pixels[i];
  f.mask = gc::make_clean_mask(f.dirty, nullptr, 0.0);
  return f;
}

gc::CleanSettings five_sigma(gc::Device device, bool local_rms) {
  gc::CleanSettings s;
  s.device = device;
  s.niter = 20000;
  s.auto_threshold = 5.0;
  s.beam_patch = 16;
  s.threads = 2;
  s.local_rms.enabled = local_rms;
  s.local_rms.window = 8.0;
  return s;
}

bool near(const gc::Component& c, const PointSource& s, long d) {
  return std::abs(static_cast<long>(c.x) - static_cast<long>(s.x)) <= d &&
         std::abs(static_cast<long>(c.y) - static_cast<long>(s.y)) <= d;
}

double flux_near(const gc::CleanResult& r, const PointSource& s) {
  double f = 0.0;
  for (const auto& c : r.components.list) f += near(c, s, 3) ? c.flux : 0.0;
  return f;
}

std::size_t elsewhere(const gc::CleanResult& r, const Field& f) {
  std::size_t count = 0;
  for (const auto& c : r.components.list) count += !near(c, f.sources[0], 3) && !near(c, f.sources[2], 3);
  return count;
}

}  // namespace

class LocalRmsField : public gpuclean::test::DeviceTest {};

TEST_P(LocalRmsField, ThresholdsHoldAgainstTheLocalNoise) {
  const Field f = two_noise_field();
  auto d = gc::make_deconvolver(gc::Algorithm::kClark, GetParam());
  const gc::CleanResult global = d->run({f.dirty, f.psf, f.mask}, five_sigma(GetParam(), false), nullptr);
  const gc::CleanResult local = d->run({f.dirty, f.psf, f.mask}, five_sigma(GetParam(), true), nullptr);
  ASSERT_TRUE(local.diagnostics.local_rms.used);
  EXPECT_NEAR(local.diagnostics.local_rms.min_rms, kQuiet, 0.2 * kQuiet);
  EXPECT_EQ(local.stop.noise_sigma, local.diagnostics.local_rms.min_rms);
  // One global sigma: the noisy half's noise and B are cleaned.
  EXPECT_GT(elsewhere(global, f), 20u);
  // The local noise: A and C cleaned, B (3 local sigma) and the noisy half's noise left alone.
  EXPECT_GT(flux_near(local, f.sources[0]), 0.4 * f.sources[0].flux);
  EXPECT_GT(flux_near(local, f.sources[2]), 0.4 * f.sources[2].flux);
  EXPECT_EQ(flux_near(local, f.sources[1]), 0.0);
  EXPECT_LE(elsewhere(local, f), 2u);
  std::printf("  components off A and C: %zu with one global sigma, %zu with --local-rms; A %.1f, C %.1f mJy\n",
              elsewhere(global, f), elsewhere(local, f), 1e3 * flux_near(local, f.sources[0]),
              1e3 * flux_near(local, f.sources[2]));
}

TEST_P(LocalRmsField, MadThresholdsHoldToo) {
  const Field f = two_noise_field();
  gc::CleanSettings s = five_sigma(GetParam(), true);
  s.local_rms.method = gc::LocalRmsMethod::kMad;
  const gc::CleanResult r = gc::make_deconvolver(gc::Algorithm::kClark, GetParam())->run({f.dirty, f.psf, f.mask}, s, nullptr);
  EXPECT_NEAR(r.diagnostics.local_rms.min_rms, kQuiet, 0.2 * kQuiet);
  EXPECT_GT(flux_near(r, f.sources[0]), 0.4 * f.sources[0].flux);
  EXPECT_GT(flux_near(r, f.sources[2]), 0.4 * f.sources[2].flux);
  EXPECT_EQ(flux_near(r, f.sources[1]), 0.0);
  // A median is held by the quieter half of a box that straddles the step from 1 to 10 mJy, so
  // there the map is low and the noisy side's noise is cleaned: count away from the step only.
  std::size_t off_step = 0, on_step = 0;
  for (const auto& c : r.components.list) {
    if (near(c, f.sources[0], 3) || near(c, f.sources[2], 3)) continue;
    (std::abs(static_cast<long>(c.x) - static_cast<long>(kN / 2)) < 48 ? on_step : off_step) += 1;
  }
  EXPECT_LE(off_step, 2u);
  std::printf("  mad: components off A and C: %zu within 48 pixels of the noise step, %zu elsewhere\n", on_step,
              off_step);
}

TEST_P(LocalRmsField, AutoMaskDropsTheMapInsideTheMask) {
  const Field f = two_noise_field();
  gc::CleanSettings s = five_sigma(GetParam(), true);
  s.auto_threshold = 2.0;
  s.auto_mask = 5.0;
  s.multiscale.enabled = true;
  auto d = gc::make_deconvolver(gc::Algorithm::kClark, GetParam());
  const gc::CleanResult r = d->run({f.dirty, f.psf, f.mask}, s, nullptr);
  ASSERT_GT(r.diagnostics.auto_mask_cycle, 0u);
  EXPECT_EQ(r.diagnostics.local_rms.dropped_at_cycle, r.diagnostics.auto_mask_cycle);
  EXPECT_EQ(flux_near(r, f.sources[1]), 0.0);  // never in the mask: the first phase left it
  EXPECT_NE(r.stop.noise_sigma, r.diagnostics.local_rms.min_rms);  // the second phase's sigma is the global one
}

INSTANTIATE_TEST_SUITE_P(Devices, LocalRmsField, ::testing::Values(gc::Device::kCpu, gc::Device::kGpu),
                         [](const auto& p) { return std::string(gc::to_string(p.param)); });

#ifdef GPUCLEAN_HAVE_CUDA
TEST(LocalRmsGpu, MapAndWeightsEqualTheCpusToTheBit) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  gc::HostImage img = noise_image(301, 203, 1e-3, 4e-3, 9);
  for (std::size_t y = 50; y < 60; ++y)
    for (std::size_t x = 100; x < 130; ++x) img.at(x, y) = NAN;
  img.at(150, 100) = 2.0f;  // a bright pixel
  gpuclean::cuda::DeviceBuffer<float> d_img(img.size(), nullptr);
  ASSERT_EQ(cudaMemcpy(d_img.data(), img.pixels.data(), img.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  for (int mode = 0; mode < 3; ++mode) {
    const gc::LocalRmsMethod method = mode == 1 ? gc::LocalRmsMethod::kMad : gc::LocalRmsMethod::kRms;
    gc::LocalRmsSettings settings;
    settings.method = method;
    settings.periodic = mode == 2;  // radler's map (WSClean 3.3-3.7)
    const gc::HostImage cpu = gc::local_noise_map(img, settings, 23.0, 2);
    const gc::LocalRmsWeights cpu_w = gc::local_rms_weights(cpu);
    gc::gpu::LocalRmsDevice gpu;
    gc::gpu::local_noise_gpu(nullptr, d_img.data(), img.width, img.height, settings, 23.0, gpu);
    const gc::HostImage map = gc::gpu::download_map(nullptr, gpu, img.width, img.height);
    ASSERT_EQ(map.size(), cpu.size());
    for (std::size_t i = 0; i < cpu.size(); ++i) ASSERT_EQ(map.pixels[i], cpu.pixels[i]) << gc::to_string(method) << " " << i;
    EXPECT_EQ(gpu.min_rms, cpu_w.min_rms);
    EXPECT_EQ(gpu.max_rms, cpu_w.max_rms);
    std::vector<float> w(img.size());
    ASSERT_EQ(cudaMemcpy(w.data(), gpu.weights.data(), w.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::size_t i = 0; i < w.size(); ++i) ASSERT_EQ(w[i], cpu_w.weights[i]) << gc::to_string(method) << " " << i;
  }
}

TEST(LocalRmsGpu, CleanMakesTheCpusFirstCycleAndStatistics) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  const Field f = two_noise_field();
  for (int variant = 0; variant < 3; ++variant) {
    const bool multiscale = variant == 1;
    gc::CleanSettings s = five_sigma(gc::Device::kCpu, true);
    s.auto_threshold = 3.0;
    s.multiscale.enabled = multiscale;
    if (variant == 2) s.local_rms.method = gc::LocalRmsMethod::kMad;
    std::size_t first_cpu = 0, first_gpu = 0;
    gc::CleanProblem problem{f.dirty, f.psf, f.mask};
    problem.keep_noise_map = true;
    const gc::CleanResult cpu = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kCpu)
                                    ->run(problem, s, [&](const gc::CycleReport& c) { if (c.cycle == 1) first_cpu = c.iterations; });
    s.device = gc::Device::kGpu;
    const gc::CleanResult gpu = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kGpu)
                                    ->run(problem, s, [&](const gc::CycleReport& c) { if (c.cycle == 1) first_gpu = c.iterations; });
    // The last maps are of the last residuals, which differ in the last bits after the first cycle.
    ASSERT_EQ(gpu.images.noise_map.size(), cpu.images.noise_map.size());
    for (std::size_t i = 0; i < cpu.images.noise_map.size(); ++i)
      ASSERT_NEAR(gpu.images.noise_map.pixels[i], cpu.images.noise_map.pixels[i], 1e-4 * cpu.images.noise_map.pixels[i]) << i;
    ASSERT_EQ(first_gpu, first_cpu) << "variant " << variant;
    ASSERT_GT(first_cpu, 0u);
    for (std::size_t i = 0; i < first_cpu; ++i) {
      ASSERT_EQ(gpu.components.list[i].x, cpu.components.list[i].x) << i;
      ASSERT_EQ(gpu.components.list[i].y, cpu.components.list[i].y) << i;
      ASSERT_EQ(gpu.components.list[i].scale, cpu.components.list[i].scale) << i;
      ASSERT_NEAR(gpu.components.list[i].flux, cpu.components.list[i].flux, 1e-5 * std::abs(cpu.components.list[i].flux)) << i;
    }
    EXPECT_EQ(gpu.stop.reason, cpu.stop.reason);
    double cpu_flux = 0.0, gpu_flux = 0.0;
    for (const auto& c : cpu.components.list) cpu_flux += c.flux;
    for (const auto& c : gpu.components.list) gpu_flux += c.flux;
    EXPECT_NEAR(gpu_flux, cpu_flux, 1e-3 * std::abs(cpu_flux)) << "variant " << variant;
    std::printf("  %s, %s: CPU %zu components (%zu in cycle 1), GPU %zu; model flux %.6f / %.6f Jy\n",
                multiscale ? "multiscale" : "clark", std::string(gc::to_string(s.local_rms.method)).c_str(),
                cpu.components.list.size(), first_cpu, gpu.components.list.size(), cpu_flux, gpu_flux);
  }
}
#endif

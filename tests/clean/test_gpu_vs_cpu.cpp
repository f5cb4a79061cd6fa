// GPU CLEAN against the CPU reference on realistic fields: the bundled sample (512^2), a
// simulated 4096^2 MeerKAT field, and the WSClean 3.1 pair. The same components, bit for bit,
// through the first major cycle (after it cuFFT and FFTW round the subtraction differently, so
// later near-ties may go either way); residual RMS, model flux and restored peak within 0.1%;
// the same stop reason. Multiscale: the same components (scale, pixel, order) through the first
// major cycle with fluxes within 1e-4 (its scale images are already FFT convolutions, which
// cuFFT and FFTW round differently), and the same final checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "clean/beam.hpp"
#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/image_stats.hpp"
#include "data/simulate.hpp"
#include "io/fits_reader.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/paths.hpp"

namespace gc = gpuclean::clean;

namespace {

struct Field {
  gc::HostImage dirty;
  gc::PreparedPsf psf;
  std::vector<std::uint8_t> mask;
  gc::PixelGaussian beam;
};

gc::HostImage read_image(const std::string& path) {
  auto f = gpuclean::io::read_fits_image(path);
  gc::HostImage h(f.width, f.height);
  h.pixels = std::move(f.pixels);
  return h;
}

Field field_from(gc::HostImage dirty, const gc::HostImage& psf) {
  Field f;
  f.psf = gc::prepare_psf(psf, dirty.width, dirty.height, nullptr);
  f.mask = gc::make_clean_mask(dirty, nullptr, 0.0);
  f.dirty = std::move(dirty);
  f.beam = gc::fit_psf_beam(f.psf, gc::BeamFit::kWsclean);
  return f;
}

// A simulated MeerKAT field (the simulator's defaults otherwise).
Field simulated_field(std::size_t size, std::size_t sources, std::size_t gaussians, std::uint64_t seed) {
  gpuclean::data::SimulationSettings sim;
  sim.size = size;
  sim.sources = sources;
  sim.gaussians = gaussians;
  sim.seed = seed;
  const auto out = gpuclean::data::simulate(sim);
  gc::HostImage dirty(size, size), psf(size, size);
  dirty.pixels = out.dirty;
  psf.pixels = out.psf;
  return field_from(std::move(dirty), psf);
}

double restored_peak(const gc::HostImage& img) {
  double peak = 0.0;
  for (float v : img.pixels)
    if (std::isfinite(v)) peak = std::max(peak, static_cast<double>(v));
  return peak;
}

void expect_agree(const Field& f, gc::CleanSettings s) {
  const gc::CleanProblem problem{f.dirty, f.psf, f.mask, &f.beam};
  // Components made by the end of the first major cycle (reported when the second opens).
  std::size_t first_cpu = 0, first_gpu = 0;
  const gc::CycleCallback on_cpu = [&](const gc::CycleReport& r) {
    if (r.cycle == 1) first_cpu = r.iterations;
  };
  const gc::CycleCallback on_gpu = [&](const gc::CycleReport& r) {
    if (r.cycle == 1) first_gpu = r.iterations;
  };
  s.device = gc::Device::kCpu;
  const gc::CleanResult cpu = gc::make_deconvolver(s.algorithm, gc::Device::kCpu)->run(problem, s, on_cpu);
  s.device = gc::Device::kGpu;
  const gc::CleanResult gpu = gc::make_deconvolver(s.algorithm, gc::Device::kGpu)->run(problem, s, on_gpu);

  ASSERT_GE(cpu.components.list.size(), 100u) << "the case must make at least 100 components";
  ASSERT_GE(gpu.components.list.size(), 100u);
  // Högbom's "cycles" are batches of one-component steps; compare its first 100 components.
  const std::size_t first = s.algorithm == gc::Algorithm::kClark ? first_cpu : 100;
  ASSERT_GT(first, 0u);
  EXPECT_EQ(first_gpu, first_cpu) << "components in the first major cycle";
  for (std::size_t i = 0; i < std::min(first, gpu.components.list.size()); ++i) {
    ASSERT_EQ(gpu.components.list[i].x, cpu.components.list[i].x) << "component " << i;
    ASSERT_EQ(gpu.components.list[i].y, cpu.components.list[i].y) << "component " << i;
    ASSERT_EQ(gpu.components.list[i].scale, cpu.components.list[i].scale) << "component " << i;
    if (s.multiscale.enabled) {
      ASSERT_NEAR(gpu.components.list[i].flux, cpu.components.list[i].flux, 1e-4 * std::abs(cpu.components.list[i].flux))
          << "component " << i;
    } else {
      ASSERT_EQ(std::memcmp(&gpu.components.list[i].flux, &cpu.components.list[i].flux, 4), 0) << "component " << i;
    }
  }
  EXPECT_EQ(gpu.stop.reason, cpu.stop.reason);
  const double rms_c = gc::rms(cpu.images.residual.pixels), rms_g = gc::rms(gpu.images.residual.pixels);
  const double flux_c = gc::total_flux(cpu.images.model.pixels), flux_g = gc::total_flux(gpu.images.model.pixels);
  const double peak_c = restored_peak(cpu.images.restored), peak_g = restored_peak(gpu.images.restored);
  EXPECT_NEAR(rms_g, rms_c, 1e-3 * rms_c);
  EXPECT_NEAR(flux_g, flux_c, 1e-3 * std::abs(flux_c));
  EXPECT_NEAR(peak_g, peak_c, 1e-3 * peak_c);
  EXPECT_GT(gpu.diagnostics.peak_gpu_bytes, f.dirty.size() * 4 * sizeof(float)) << "peak GPU memory is reported";
  std::printf("  %s %zux%zu: cpu %zu components / %zu cycles, gpu %zu / %zu; rms %.6e / %.6e, flux %.6f / %.6f, "
              "restored peak %.6f / %.6f; first cycle %zu components; gpu clean %.3f s (select %.3f, "
              "minor %.3f, convolve %.3f; %zu clusters, longest chain %zu, SMs busy %.0f%%), cpu %.3f s\n",
              s.multiscale.enabled ? "multiscale" : std::string(gc::to_string(s.algorithm)).c_str(), f.dirty.width, f.dirty.height, cpu.stop.iterations,
              cpu.stop.major_cycles, gpu.stop.iterations, gpu.stop.major_cycles, rms_c, rms_g, flux_c, flux_g, peak_c, peak_g, first,
              gpu.diagnostics.seconds.select + gpu.diagnostics.seconds.minor + gpu.diagnostics.seconds.convolve, gpu.diagnostics.seconds.select, gpu.diagnostics.seconds.minor,
              gpu.diagnostics.seconds.convolve, gpu.diagnostics.minor_stats.clusters, gpu.diagnostics.minor_stats.longest_chain,
              100.0 * gpu.diagnostics.minor_stats.sm_busy_fraction, cpu.diagnostics.seconds.select + cpu.diagnostics.seconds.minor + cpu.diagnostics.seconds.convolve);
}

}  // namespace

using GpuVsCpu = gpuclean::test::GpuTest;

TEST_F(GpuVsCpu, ClarkOnTheBundledSample) {
  const std::string dir = gpuclean::test::source_dir() + "/data/sample/";
  const Field f = field_from(read_image(dir + "dirty.fits"), read_image(dir + "psf.fits"));
  expect_agree(f, gc::CleanSettings{});
}

TEST_F(GpuVsCpu, HogbomOnTheBundledSample) {
  const std::string dir = gpuclean::test::source_dir() + "/data/sample/";
  const Field f = field_from(read_image(dir + "dirty.fits"), read_image(dir + "psf.fits"));
  gc::CleanSettings s;
  s.algorithm = gc::Algorithm::kHogbom;
  s.niter = 3000;
  expect_agree(f, s);
}

TEST_F(GpuVsCpu, ClarkOnTheWscleanPair) {
  const std::string dir = gpuclean::test::shared_dir() + "/data/wsclean-256/";
  const Field f = field_from(read_image(dir + "meerkat-cdfs-256-dirty.fits"), read_image(dir + "meerkat-cdfs-256-psf.fits"));
  expect_agree(f, gc::CleanSettings{});
}

TEST_F(GpuVsCpu, ClarkOnA4096SimulatedField) {
  gc::CleanSettings s;
  s.niter = 20000;
  expect_agree(simulated_field(4096, 2000, 20, 11), s);
}

TEST_F(GpuVsCpu, MaskAndPositiveOnlyOnTheSample) {
  const std::string dir = gpuclean::test::source_dir() + "/data/sample/";
  Field f = field_from(read_image(dir + "dirty.fits"), read_image(dir + "psf.fits"));
  for (std::size_t y = 0; y < f.dirty.height; ++y)
    for (std::size_t x = 0; x < f.dirty.width; ++x)
      if (x < 128 || y > 400) f.mask[y * f.dirty.width + x] = 0;
  gc::CleanSettings s;
  s.allow_negative = false;
  expect_agree(f, s);
}

TEST_F(GpuVsCpu, MultiscaleOnTheBundledSample) {
  const std::string dir = gpuclean::test::source_dir() + "/data/sample/";
  const Field f = field_from(read_image(dir + "dirty.fits"), read_image(dir + "psf.fits"));
  gc::CleanSettings s;
  s.multiscale.enabled = true;
  expect_agree(f, s);
}

TEST_F(GpuVsCpu, MultiscaleOnASimulatedFieldWithGaussians) {
  gc::CleanSettings s;
  s.multiscale.enabled = true;
  s.niter = 20000;
  expect_agree(simulated_field(1024, 100, 40, 5), s);
}

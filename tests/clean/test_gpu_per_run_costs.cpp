// What GPU CLEAN keeps from one run to the next, and how it moves data: the pinned staging
// round-trips any size bit-exactly; the PSF content hash tells PSFs apart; a cached PSF spectrum
// gives exactly the result of a fresh one, and another PSF of the same size is never served
// from the cache; the restoring beam generated on the device is the host's gaussian_kernel, and
// the restored image is the CPU restoration of the same model and residual; a worker prepared
// for the image size makes no cuFFT plan in its first run and cleans as a fresh one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "clean/beam.hpp"
#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/restore.hpp"
#include "io/fits_reader.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/event.hpp"
#include "select/cuda/pinned_staging.hpp"
#include "select/cuda/stream.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/synthetic.hpp"

namespace gc = gpuclean::clean;
namespace gg = gpuclean::clean::gpu;
namespace cu = gpuclean::cuda;

namespace {

using PerRunCosts = gpuclean::test::GpuTest;

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

template <class T>
std::vector<T> to_host(cudaStream_t s, const T* d, std::size_t count) {
  std::vector<T> h(count);
  if (count) GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost, s));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  return h;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

gc::HostImage read_image(const std::string& path) {
  auto f = gpuclean::io::read_fits_image(path);
  gc::HostImage h(f.width, f.height);
  h.pixels = std::move(f.pixels);
  return h;
}

struct Field {
  gc::HostImage dirty;
  gc::PreparedPsf psf;
  std::vector<std::uint8_t> mask;
  gc::PixelGaussian beam;
};

Field sample_field() {
  const std::string dir = gpuclean::test::source_dir() + "/data/sample/";
  Field f;
  f.dirty = read_image(dir + "dirty.fits");
  f.psf = gc::prepare_psf(read_image(dir + "psf.fits"), f.dirty.width, f.dirty.height, nullptr);
  f.mask = gc::make_clean_mask(f.dirty, nullptr, 0.0);
  f.beam = gc::fit_psf_beam(f.psf, gc::BeamFit::kWsclean);
  return f;
}

// A small analytic field with the given PSF.
Field analytic_field(const gc::HostImage& psf_image) {
  constexpr std::size_t kN = 96;
  Field f;
  f.psf = gc::prepare_psf(psf_image, kN, kN, nullptr);
  f.dirty = gpuclean::test::dirty_of({{30, 40, 1.0f}, {60, 50, 0.6f}, {47, 70, -0.3f}}, f.psf, kN);
  f.mask = gc::make_clean_mask(f.dirty, nullptr, 0.0);
  f.beam = gc::PixelGaussian{4.0, 0.5, 3.0};
  return f;
}

// The spectrum's values, once the main stream may read them.
std::vector<float> spectrum_values(const gg::GpuResources& res, const gg::Spectrum& s) {
  s.wait_ready(res.stream());
  return to_host(res.stream(), reinterpret_cast<const float*>(s.data()), 2 * s.count());
}

void expect_bit_identical(const gc::CleanResult& a, const gc::CleanResult& b) {
  EXPECT_EQ(a.stop.iterations, b.stop.iterations);
  EXPECT_EQ(a.stop.major_cycles, b.stop.major_cycles);
  ASSERT_EQ(a.components.list.size(), b.components.list.size());
  for (std::size_t i = 0; i < a.components.list.size(); ++i) {
    EXPECT_EQ(a.components.list[i].x, b.components.list[i].x) << i;
    EXPECT_EQ(a.components.list[i].y, b.components.list[i].y) << i;
    EXPECT_EQ(std::memcmp(&a.components.list[i].flux, &b.components.list[i].flux, sizeof(float)), 0) << i;
  }
  EXPECT_TRUE(same_bytes(a.images.residual.pixels, b.images.residual.pixels)) << "residual";
  EXPECT_TRUE(same_bytes(a.images.model.pixels, b.images.model.pixels)) << "model";
  EXPECT_TRUE(same_bytes(a.images.restored.pixels, b.images.restored.pixels)) << "restored";
}

}  // namespace

TEST_F(PerRunCosts, StagingRoundTripsEverySizeBitExactly) {
  cu::Stream a, b;
  // A small chunk makes many-chunk transfers cheap; the default one is checked past two chunks.
  for (const std::size_t chunk : {std::size_t{4096}, cu::PinnedStaging::kDefaultChunkBytes}) {
    cu::PinnedStaging staging(chunk);
    std::vector<std::size_t> sizes = {0, 1, 3, chunk - 1, chunk, chunk + 1, 2 * chunk, 2 * chunk + 1, 5 * chunk + 7};
    if (chunk == 4096) sizes.push_back(1000 * chunk + 333);
    for (const std::size_t n : sizes) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + ", " + std::to_string(n) + " bytes");
      const std::vector<unsigned char> original = random_bytes(n, static_cast<unsigned>(n + chunk));
      std::vector<unsigned char> source = original;
      cu::DeviceBuffer<unsigned char> d(n, a.get());
      staging.upload(a.get(), d.data(), source.data(), n);
      // The source may be reused as soon as upload() returns.
      std::fill(source.begin(), source.end(), static_cast<unsigned char>(0xa5));
      // Back on the other stream, ordered after the upload by an event.
      cu::Event uploaded;
      uploaded.record(a.get());
      uploaded.wait_on(b.get());
      std::vector<unsigned char> back(n, 0x5a);
      staging.download(b.get(), back.data(), d.data(), n);
      EXPECT_TRUE(back == original);
      // And what the device holds is the upload, byte for byte (a plain copy as the reference).
      EXPECT_TRUE(to_host(b.get(), d.data(), n) == original);
      GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(a.get()));
    }
    // Back-to-back uploads keep both chunks busy; each lands where it should.
    const std::size_t n = 3 * chunk + 5;
    std::vector<std::vector<unsigned char>> parts;
    std::vector<cu::DeviceBuffer<unsigned char>> buffers;
    for (unsigned i = 0; i < 3; ++i) {
      parts.push_back(random_bytes(n + i, 100 + i));
      buffers.emplace_back(n + i, a.get());
      staging.upload(a.get(), buffers.back().data(), parts.back().data(), n + i);
    }
    for (unsigned i = 0; i < 3; ++i) {
      std::vector<unsigned char> back(n + i);
      staging.download(a.get(), back.data(), buffers[i].data(), n + i);
      EXPECT_TRUE(back == parts[i]) << "buffer " << i;
    }
  }
}

TEST_F(PerRunCosts, ContentHashSeesEveryWordAndItsPlace) {
  cu::Stream s;
  const std::size_t n = 100003;
  std::vector<std::uint32_t> words(n);
  std::mt19937 rng(7);
  for (auto& w : words) w = rng();
  const auto hash_of = [&](const std::vector<std::uint32_t>& h) {
    cu::DeviceBuffer<std::uint32_t> d(h.size(), s.get());
    cu::DeviceBuffer<unsigned long long> out(2, s.get());
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(out.data(), 0, 16, s.get()));
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d.data(), h.data(), h.size() * 4, cudaMemcpyHostToDevice, s.get()));
    gg::content_hash(s.get(), d.data(), h.size(), out.data());
    return to_host(s.get(), out.data(), 2);
  };
  const auto base = hash_of(words);
  EXPECT_EQ(hash_of(words), base) << "the same words hash the same (whatever order blocks finish in)";
  auto flipped = words;
  flipped[n / 2] ^= 1u;
  const auto h1 = hash_of(flipped);
  EXPECT_NE(h1[0], base[0]);
  EXPECT_NE(h1[1], base[1]);
  auto swapped = words;
  ASSERT_NE(swapped[10], swapped[20]);
  std::swap(swapped[10], swapped[20]);
  const auto h2 = hash_of(swapped);
  EXPECT_NE(h2[0], base[0]) << "positions count";
  EXPECT_NE(h2[1], base[1]);
  auto shorter = words;
  shorter.pop_back();
  EXPECT_NE(hash_of(shorter), base);
}

TEST_F(PerRunCosts, PsfSpectrumCacheServesOnlyTheSamePsf) {
  const Field a = analytic_field(gpuclean::test::sidelobed_psf(128, 2.0));
  const Field b = analytic_field(gpuclean::test::sidelobed_psf(128, 2.6));  // another PSF, same size
  Field c = a;  // A with one pixel one ulp away
  float& v = c.psf.image.at(70, 50);
  v = std::nextafter(v, 2.0f);
  gc::CleanSettings s;
  gg::GpuResources res;
  const gg::SpectrumCache& cache = res.psf_spectra();
  const auto fetch = [&](const Field& f) {
    const gc::CleanProblem p{f.dirty, f.psf, f.mask, &f.beam};
    gg::GpuImageState st(res, p, s, gg::PsfOnDevice::kSpectrum);
    return st.psf_spectrum();
  };

  const auto a1 = fetch(a);
  EXPECT_EQ(cache.misses(), 1u);
  const std::vector<float> a1_values = spectrum_values(res, *a1);
  const auto a2 = fetch(a);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(a2.get(), a1.get()) << "the same PSF is served from the cache";

  const auto b1 = fetch(b);
  const auto c1 = fetch(c);
  EXPECT_EQ(cache.misses(), 3u) << "neither another PSF nor one pixel one ulp away is a hit";
  EXPECT_NE(b1.get(), a1.get());
  EXPECT_NE(c1.get(), a1.get());
  EXPECT_FALSE(same_bytes(spectrum_values(res, *b1), a1_values));
  EXPECT_FALSE(same_bytes(spectrum_values(res, *c1), a1_values));
  EXPECT_LE(cache.size(), gg::GpuResources::kPsfSpectra);

  // A was dropped for C (two entries); made again, its spectrum is the first one bit for bit.
  const auto a3 = fetch(a);
  EXPECT_EQ(cache.misses(), 4u);
  EXPECT_TRUE(same_bytes(spectrum_values(res, *a3), a1_values));
}

TEST_F(PerRunCosts, CachedPsfSpectrumGivesTheResultOfAFreshOne) {
  const Field f = sample_field();
  const Field other = analytic_field(gpuclean::test::sidelobed_psf(128, 2.6));
  const gc::CleanProblem p{f.dirty, f.psf, f.mask, &f.beam};
  const gc::CleanProblem q{other.dirty, other.psf, other.mask, &other.beam};
  gc::CleanSettings s;
  s.device = gc::Device::kGpu;
  for (const gc::Algorithm algorithm : {gc::Algorithm::kClark, gc::Algorithm::kHogbom}) {
    SCOPED_TRACE(std::string(gc::to_string(algorithm)));
    s.algorithm = algorithm;
    s.niter = algorithm == gc::Algorithm::kHogbom ? 2000 : s.niter;
    const auto d = gc::make_deconvolver(algorithm, gc::Device::kGpu);
    const gc::CleanResult first = d->run(p, s, nullptr);   // PSF and beam spectra made
    ASSERT_GT(first.stop.iterations, 100u);
    const gc::CleanResult second = d->run(p, s, nullptr);  // both from the caches
    expect_bit_identical(first, second);
    const gc::CleanResult between = d->run(q, s, nullptr);  // another PSF and beam in between
    EXPECT_GT(between.stop.iterations, 0u);
    expect_bit_identical(first, d->run(p, s, nullptr));
    // A deconvolver of its own (fresh resources, nothing cached) agrees too.
    expect_bit_identical(first, gc::make_deconvolver(algorithm, gc::Device::kGpu)->run(p, s, nullptr));
  }
}

TEST_F(PerRunCosts, DeviceRestoringKernelIsTheHostGaussianKernel) {
  struct Case {
    gc::PixelGaussian beam;
    std::size_t width, height;
  };
  const Case cases[] = {
      {{4.0, 0.0, 4.0}, 64, 48},        // round
      {{9.0, 3.5, 4.0}, 100, 100},      // elliptical, rotated
      {{9.0, -3.5, 4.0}, 77, 130},      // the other way, odd sizes
      {{0.3, 0.0, 0.3}, 40, 40},        // narrower than a pixel
      {{400.0, 50.0, 300.0}, 24, 20},   // wider than the image: cropped
  };
  cu::Stream stream;
  const cudaStream_t s = stream.get();
  gg::FftPlanCache plans;
  for (const Case& c : cases) {
    SCOPED_TRACE("beam " + std::to_string(c.beam.cxx) + "," + std::to_string(c.beam.cxy) + "," +
                 std::to_string(c.beam.cyy) + " image " + std::to_string(c.width) + "x" + std::to_string(c.height));
    const gc::HostImage k = gc::gaussian_kernel(c.beam, 2 * c.width - 1, 2 * c.height - 1);
    const std::size_t hw = k.width / 2, hh = k.height / 2;
    const gg::PaddedLayout l = gg::padded_layout(k.width, k.height, hw, hh, c.width, c.height);
    const gg::GaussianPlacement g = gg::gaussian_placement(c.beam, c.width, c.height, l);
    EXPECT_EQ(static_cast<std::size_t>(g.half_width), hw);
    EXPECT_EQ(static_cast<std::size_t>(g.half_height), hh);

    // The host kernel placed as restoration placed it before: uploaded, then place_kernel().
    cu::DeviceBuffer<float> d_kernel(k.size(), s), host_placed(l.ph * l.pitch, s), device_placed(l.ph * l.pitch, s);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_kernel.data(), k.pixels.data(), k.size() * 4, cudaMemcpyHostToDevice, s));
    gg::KernelPlacement kp;
    kp.kernel = d_kernel.data();
    kp.kernel_width = k.width;
    kp.cx = static_cast<std::ptrdiff_t>(hw);
    kp.cy = static_cast<std::ptrdiff_t>(hh);
    kp.dx_min = -kp.cx;
    kp.dx_max = kp.cx;
    kp.dy_min = -kp.cy;
    kp.dy_max = kp.cy;
    kp.scale = 1.0f / static_cast<float>(l.pw * l.ph);
    gg::place_kernel(s, kp, l, host_placed.data());
    gg::place_gaussian(s, g, l, device_placed.data());
    const auto want = to_host(s, host_placed.data(), host_placed.size());
    const auto got = to_host(s, device_placed.data(), device_placed.size());
    std::size_t nonzero = 0, worst_at = 0;
    double worst = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      nonzero += want[i] != 0.0f;
      // Relative, with an absolute floor at float's smallest normal numbers.
      const double err = std::abs(static_cast<double>(got[i]) - want[i]) / std::max(std::abs(static_cast<double>(want[i])), 1e-30);
      if (err > worst) worst = err, worst_at = i;
    }
    EXPECT_LE(worst, 1e-6) << "at " << worst_at << ": " << got[worst_at] << " vs " << want[worst_at];
    EXPECT_GT(nonzero, 0u);

    // Their spectra agree as well (the whole restoring transform), in the restoring layout: at
    // least a centred image-sized kernel's, which the host kernel gets embedded in such a grid.
    const bool wide_x = hw <= c.width / 2, wide_y = hh <= c.height / 2;
    const std::size_t gw = wide_x ? c.width : k.width, gh = wide_y ? c.height : k.height;
    const std::size_t cx = wide_x ? c.width / 2 : hw, cy = wide_y ? c.height / 2 : hh;
    gc::HostImage grid(gw, gh);
    for (std::size_t y = 0; y < k.height; ++y)
      for (std::size_t x = 0; x < k.width; ++x) grid.at(cx - hw + x, cy - hh + y) = k.at(x, y);
    cu::DeviceBuffer<float> d_grid(grid.size(), s);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_grid.data(), grid.pixels.data(), grid.size() * 4, cudaMemcpyHostToDevice, s));
    const auto from_host = gg::kernel_spectrum(plans, s, s, d_grid.data(), gw, gh, cx, cy, c.width, c.height);
    const auto from_device = gg::gaussian_spectrum(plans, s, c.beam, c.width, c.height);
    ASSERT_EQ(from_host->count(), from_device->count());
    const auto sh = to_host(s, reinterpret_cast<const float*>(from_host->data()), 2 * from_host->count());
    const auto sd = to_host(s, reinterpret_cast<const float*>(from_device->data()), 2 * from_device->count());
    double top = 0.0, diff = 0.0;
    for (std::size_t i = 0; i < sh.size(); ++i) {
      top = std::max(top, std::abs(static_cast<double>(sh[i])));
      diff = std::max(diff, std::abs(static_cast<double>(sd[i]) - sh[i]));
    }
    EXPECT_LE(diff, 1e-6 * top);
  }
}

TEST_F(PerRunCosts, RestoredImageIsTheCpuRestorationOfTheSameModel) {
  const Field f = sample_field();
  const gc::CleanProblem p{f.dirty, f.psf, f.mask, &f.beam};
  gc::CleanSettings s;
  s.device = gc::Device::kGpu;
  const gc::CleanResult r = gc::make_deconvolver(s.algorithm, gc::Device::kGpu)->run(p, s, nullptr);
  ASSERT_GT(r.stop.iterations, 0u);
  const gc::HostImage cpu = gc::restore_cpu(r.images.model, r.images.residual, f.beam, 2);
  ASSERT_EQ(cpu.size(), r.images.restored.size());
  double peak = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(std::isnan(cpu.pixels[i]), std::isnan(r.images.restored.pixels[i])) << i;
    if (std::isnan(cpu.pixels[i])) continue;
    peak = std::max(peak, std::abs(static_cast<double>(cpu.pixels[i])));
    worst = std::max(worst, std::abs(static_cast<double>(cpu.pixels[i]) - r.images.restored.pixels[i]));
  }
  EXPECT_GT(peak, 0.0);
  EXPECT_LE(worst, 1e-4 * peak);  // a misplaced beam would be off by a good part of the peak
}

// A convolver keeps its plans when the plan cache drops them (a multiscale run needs more padded
// sizes than the cache keeps): it still convolves right after the cache has moved on.
TEST_F(PerRunCosts, ConvolverOutlivesItsPlansInTheCache) {
  namespace g = gpuclean::clean::gpu;
  g::GpuResources res;
  const cudaStream_t s = res.stream();
  constexpr std::size_t kW = 64;
  const std::vector<float> delta = {0, 0, 0, 0, 1, 0, 0, 0, 0};  // 3 x 3, a delta at the centre
  gpuclean::cuda::DeviceBuffer<float> kernel(9, s), image(kW * kW, s), out(kW * kW, s);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(kernel.data(), delta.data(), 36, cudaMemcpyHostToDevice, s));
  std::vector<float> h(kW * kW);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i % 97);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(image.data(), h.data(), h.size() * 4, cudaMemcpyHostToDevice, s));
  g::FftConvolverGpu conv(res.plans(), s, kernel.data(), 3, 3, 1, 1, kW, kW);
  // More other sizes than the cache holds.
  for (std::size_t extra = 1; extra <= g::FftPlanCache::kCapacity + 1; ++extra) res.plans().get(s, 64 + 2 * extra, 64);
  conv.convolve(image.data());
  conv.add_to(nullptr, out.data());
  std::vector<float> back(h.size());
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(back.data(), out.data(), back.size() * 4, cudaMemcpyDeviceToHost, s));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_NEAR(back[i], h[i], 1e-3f) << i;
}

namespace {

double setup_part(const gc::CleanResult& r, const std::string& name) {
  for (const auto& [part, value] : r.diagnostics.setup_parts)
    if (part == name) return value;
  ADD_FAILURE() << "no setup part " << name;
  return -1.0;
}

}  // namespace

// A worker prepared for the image size (a cube does it while it reads) makes its streams, staging
// and cuFFT plans then: its first run makes none of them, and cleans exactly as a fresh worker.
TEST_F(PerRunCosts, APreparedWorkersFirstRunMakesNoPlansAndGivesTheSameResult) {
  const Field f = analytic_field(gpuclean::test::sidelobed_psf(96, 2.6));  // the image's size, centred
  const gc::CleanProblem p{f.dirty, f.psf, f.mask, &f.beam};
  gc::CleanSettings s;
  s.device = gc::Device::kGpu;
  const gc::CleanResult fresh = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kGpu)->run(p, s, nullptr);
  EXPECT_GT(setup_part(fresh, "fft_plans_made"), 0.0);
  EXPECT_GT(setup_part(fresh, "resources"), 0.0);
  const auto d = gc::make_deconvolver(gc::Algorithm::kClark, gc::Device::kGpu);
  d->prepare(f.dirty.width, f.dirty.height);
  const gc::CleanResult prepared = d->run(p, s, nullptr);
  EXPECT_EQ(setup_part(prepared, "fft_plans_made"), 0.0);
  EXPECT_EQ(setup_part(prepared, "resources"), 0.0);
  ASSERT_GT(fresh.stop.iterations, 10u);
  expect_bit_identical(fresh, prepared);
}

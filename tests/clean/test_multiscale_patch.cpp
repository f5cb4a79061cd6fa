// Multiscale's beam patch against a PSF with far sidelobes (issue 45): a sparse or snapshot array's
// PSF keeps sidelobes of nearly its peak far from it (DP3's 8-station LOFAR MS: 0.96 at 50
// pixels). A round that subtracts each scale's PSF only within a fixed patch leaves those sidelobes
// in its residual and cleans them as sources; the session grows the patch until no PSF keeps more
// than a tenth of its peak outside it. Rounds with an exact re-imaging (a direct convolution) as
// the outer loop; the truth is one point source.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "clean/outer_loop.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/synthetic.hpp"

namespace gc = gpuclean::clean;
namespace gt = gpuclean::test;

namespace {

constexpr std::size_t kSize = 128;
constexpr std::ptrdiff_t kGhost = 40;  // the far sidelobes' offset in x [pixels]
constexpr float kGhostLevel = 0.8f;

// A round main lobe (σ 1.5 pixels) and two copies of it at ±kGhost pixels in x, of kGhostLevel:
// symmetric, as a PSF is.
gc::HostImage ghosted_psf() {
  gc::HostImage p(kSize, kSize);
  const double c = static_cast<double>(kSize / 2);
  const auto lobe = [](double dx, double dy) { return std::exp(-0.5 * (dx * dx + dy * dy) / (1.5 * 1.5)); };
  for (std::size_t y = 0; y < kSize; ++y)
    for (std::size_t x = 0; x < kSize; ++x) {
      const double dx = static_cast<double>(x) - c, dy = static_cast<double>(y) - c;
      p.at(x, y) = static_cast<float>(lobe(dx, dy) + kGhostLevel * (lobe(dx - kGhost, dy) + lobe(dx + kGhost, dy)));
    }
  return p;
}

class MultiscalePatch : public gt::DeviceTest {};

TEST_P(MultiscalePatch, FarSidelobesAreSubtractedNotCleaned) {
  const gc::PreparedPsf psf = gc::prepare_psf(ghosted_psf(), kSize, kSize, nullptr);
  gc::HostImage truth(kSize, kSize);
  const std::size_t sx = 60, sy = 70;
  truth.at(sx, sy) = 1.0f;
  const gc::HostImage dirty = gt::convolve_direct(truth, psf);

  gc::OuterLoopInput in;
  in.width = in.height = kSize;
  in.psfs = {psf.image};
  in.frequencies_hz = {1.4e9};
  in.weights = {1.0};
  gc::CleanSettings s;
  s.device = GetParam();
  s.threads = 2;
  s.auto_threshold = 0.0;
  s.threshold = 1e-3;
  s.beam_patch = 16;  // the ghosts lie beyond it
  s.multiscale.enabled = true;
  s.multiscale.scales = {0.0, 4.0};
  std::vector<gc::HostImage> current = {dirty};
  gc::OuterLoopSession session(s, in, {current[0].pixels.data()});
  std::size_t rounds = 0;
  for (bool more = true; more && rounds < 30; ++rounds) {
    if (rounds > 0) session.set_residuals({current[0].pixels.data()});
    more = session.clean(0.0, 0.5, 100000, nullptr).round_floor;
    const gc::HostImage predicted = gt::convolve_direct(session.models()[0], psf);
    for (std::size_t i = 0; i < predicted.size(); ++i) current[0].pixels[i] = dirty.pixels[i] - predicted.pixels[i];
  }
  const gc::HostImage model = session.models()[0];
  double flux = 0, near_ghosts = 0;
  for (std::size_t y = 0; y < kSize; ++y)
    for (std::size_t x = 0; x < kSize; ++x) {
      flux += model.at(x, y);
      const auto dx = static_cast<std::ptrdiff_t>(x) - static_cast<std::ptrdiff_t>(sx);
      const auto dy = static_cast<std::ptrdiff_t>(y) - static_cast<std::ptrdiff_t>(sy);
      if (std::abs(dy) <= 6 && (std::abs(dx - kGhost) <= 6 || std::abs(dx + kGhost) <= 6)) near_ghosts += std::abs(model.at(x, y));
    }
  std::printf("%zu rounds: model %.5f Jy (truth 1), %.5f Jy at the far sidelobes\n", rounds, flux, near_ghosts);
  EXPECT_LT(rounds, 30u);
  EXPECT_NEAR(flux, 1.0, 0.01);
  EXPECT_LT(near_ghosts, 0.01);
}

INSTANTIATE_TEST_SUITE_P(Devices, MultiscalePatch, ::testing::Values(gc::Device::kCpu, gc::Device::kGpu),
                         [](const ::testing::TestParamInfo<gc::Device>& i) {
                           return i.param == gc::Device::kCpu ? "Cpu" : "Gpu";
                         });

}  // namespace

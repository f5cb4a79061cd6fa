#include <gtest/gtest.h>

#include <cmath>

#include "clean/fft_convolver_cpu.hpp"
#include "tests/support/synthetic.hpp"

namespace gc = gpuclean::clean;

TEST(FftConvolverCpu, MatchesDirectLinearConvolution) {
  // Sources near the edges would pick up wrapped-around sidelobes if the convolution were circular.
  const std::size_t n = 48;
  const gc::PreparedPsf psf = gc::prepare_psf(gpuclean::test::sidelobed_psf(n, 3.0), n, n, nullptr);
  gc::HostImage model(n, n);
  model.at(0, 0) = 1.0f;
  model.at(47, 3) = -0.5f;
  model.at(20, 46) = 2.0f;
  model.at(24, 24) = 0.25f;
  const gc::HostImage want = gpuclean::test::convolve_direct(model, psf);
  gc::FftConvolverCpu conv(psf.image, psf.peak_x, psf.peak_y, n, n, 1);
  gc::HostImage got(n, n);
  conv.convolve(model.pixels.data(), got.pixels.data());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got.pixels[i], want.pixels[i], 2e-6) << "pixel " << i;
}

TEST(FftConvolverCpu, LargerKernelThanImage) {
  const std::size_t n = 20;
  const gc::PreparedPsf psf = gc::prepare_psf(gpuclean::test::sidelobed_psf(2 * n, 2.0), n, n, nullptr);
  gc::HostImage model(n, n);
  model.at(1, 18) = 1.0f;
  model.at(19, 0) = 1.0f;
  const gc::HostImage want = gpuclean::test::convolve_direct(model, psf);
  gc::FftConvolverCpu conv(psf.image, psf.peak_x, psf.peak_y, n, n, 2);
  gc::HostImage got(n, n);
  conv.convolve(model.pixels.data(), got.pixels.data());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got.pixels[i], want.pixels[i], 2e-6) << "pixel " << i;
}

TEST(FftConvolverCpu, FriendlySizes) {
  EXPECT_EQ(gc::fft_friendly_size(1), 1u);
  EXPECT_EQ(gc::fft_friendly_size(11), 12u);
  EXPECT_EQ(gc::fft_friendly_size(768), 768u);
  EXPECT_EQ(gc::fft_friendly_size(1025), 1029u);  // 3 * 7^3
}

#pragma once
// A PSF of uniform random values in [lo, hi) with its peak (1) at the centre: sidelobes that make
// Högbom's sequences rise as well as fall, for tests of the minor cycle's exact order.
#include <random>

#include "clean/psf.hpp"

namespace gpuclean::test {

inline clean::PreparedPsf uniform_random_psf(std::size_t size, float lo, float hi, std::mt19937& rng) {
  clean::PreparedPsf p;
  p.image = clean::HostImage(size, size);
  std::uniform_real_distribution<float> u(lo, hi);
  for (float& v : p.image.pixels) v = u(rng);
  p.peak_x = size / 2;
  p.peak_y = size / 2;
  p.image.at(p.peak_x, p.peak_y) = 1.0f;
  return p;
}

}  // namespace gpuclean::test

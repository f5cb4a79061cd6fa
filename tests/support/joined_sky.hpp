#pragma once
// What the joined-plane GPU tests share: a random wideband sky and one Clark run of a joined set.
#include <cstdint>
#include <random>
#include <vector>

#include "clean/clean_mask.hpp"
#include "clean/deconvolver.hpp"
#include "tests/support/synthetic_cube.hpp"

namespace gpuclean::test {

/// `count` point sources at least 12 pixels inside an n x n image, of random flux and spectral index.
inline std::vector<SpectralSource> random_sky(std::size_t n, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pos(12, n - 13);
  std::uniform_real_distribution<double> flux(0.05, 1.0), alpha(-1.2, 0.6);
  std::vector<SpectralSource> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back({pos(rng), pos(rng), flux(rng), alpha(rng)});
  return out;
}

/// `planes` cleaned together by Clark on `device` (the mask: every pixel; the beam: the integrated PSF's).
inline clean::CleanResult run_joined(const clean::JoinedPlanes& planes, clean::CleanSettings s, clean::Device device) {
  const clean::JoinedProblemImages img = clean::joined_problem_images(planes);
  const auto mask = clean::make_clean_mask(img.dirty, nullptr, 0.0);
  const clean::PixelGaussian beam = clean::fit_psf_beam(img.psf);
  clean::CleanProblem problem{img.dirty, img.psf, mask, &beam};
  problem.joined = &planes;
  s.device = device;
  return clean::make_deconvolver(clean::Algorithm::kClark, device)->run(problem, s, {});
}

}  // namespace gpuclean::test

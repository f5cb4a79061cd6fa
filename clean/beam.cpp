#include "clean/beam.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <numbers>
#include <vector>

#include "clean/errors.hpp"
#include "clean/solve3.hpp"

namespace gpuclean::clean {
namespace {

const double kFwhmPerSigma = 2.0 * std::sqrt(2.0 * std::log(2.0));

struct Sample {
  double dx, dy, v;
};

// Quadratic form q = a dx^2 + 2 b dx dy + c dy^2 of the model exp(-q).
struct Quadratic {
  double a, b, c;
  bool positive_definite() const { return a > 0 && c > 0 && a * c - b * b > 0; }
};

std::vector<Sample> main_lobe(const PreparedPsf& psf, double cutoff) {
  const HostImage& im = psf.image;
  std::vector<std::uint8_t> seen(im.size(), 0);
  std::vector<std::size_t> stack{psf.peak_y * im.width + psf.peak_x};
  seen[stack.back()] = 1;
  std::vector<Sample> out;
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    const std::size_t x = i % im.width, y = i / im.width;
    out.push_back({static_cast<double>(x) - static_cast<double>(psf.peak_x),
                   static_cast<double>(y) - static_cast<double>(psf.peak_y), im.pixels[i]});
    const std::ptrdiff_t nb[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (const auto& d : nb) {
      const std::ptrdiff_t nx = static_cast<std::ptrdiff_t>(x) + d[0];
      const std::ptrdiff_t ny = static_cast<std::ptrdiff_t>(y) + d[1];
      if (nx < 0 || ny < 0 || nx >= static_cast<std::ptrdiff_t>(im.width) ||
          ny >= static_cast<std::ptrdiff_t>(im.height))
        continue;
      const std::size_t j = static_cast<std::size_t>(ny) * im.width + static_cast<std::size_t>(nx);
      if (!seen[j] && im.pixels[j] >= cutoff) {
        seen[j] = 1;
        stack.push_back(j);
      }
    }
  }
  return out;
}

double sum_sq(const std::vector<Sample>& s, const Quadratic& q) {
  double e = 0;
  for (const auto& p : s) {
    const double r = p.v - std::exp(-(q.a * p.dx * p.dx + 2 * q.b * p.dx * p.dy + q.c * p.dy * p.dy));
    e += r * r;
  }
  return e;
}

}  // namespace

double PixelGaussian::value(double dx, double dy) const {
  const double det = cxx * cyy - cxy * cxy;
  const double q = (cyy * dx * dx - 2 * cxy * dx * dy + cxx * dy * dy) / det;
  return std::exp(-0.5 * q);
}

double PixelGaussian::fwhm_major_pixels() const {
  const double mean = 0.5 * (cxx + cyy);
  const double d = std::sqrt(0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy);
  return std::sqrt(mean + d) * kFwhmPerSigma;
}

double PixelGaussian::fwhm_minor_pixels() const {
  const double mean = 0.5 * (cxx + cyy);
  const double d = std::sqrt(0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy);
  return std::sqrt(std::max(mean - d, 0.0)) * kFwhmPerSigma;
}

namespace {

std::vector<Sample> box_around_peak(const PreparedPsf& psf, double half_width) {
  const HostImage& im = psf.image;
  const auto h = static_cast<std::ptrdiff_t>(std::ceil(half_width));
  std::vector<Sample> out;
  for (std::ptrdiff_t dy = -h; dy <= h; ++dy) {
    for (std::ptrdiff_t dx = -h; dx <= h; ++dx) {
      const std::ptrdiff_t x = static_cast<std::ptrdiff_t>(psf.peak_x) + dx;
      const std::ptrdiff_t y = static_cast<std::ptrdiff_t>(psf.peak_y) + dy;
      if (x < 0 || y < 0 || x >= static_cast<std::ptrdiff_t>(im.width) || y >= static_cast<std::ptrdiff_t>(im.height))
        continue;
      out.push_back({static_cast<double>(dx), static_cast<double>(dy),
                     im.at(static_cast<std::size_t>(x), static_cast<std::size_t>(y))});
    }
  }
  return out;
}

PixelGaussian fit_samples(const std::vector<Sample>& s);

}  // namespace

PixelGaussian fit_psf_beam(const PreparedPsf& psf, BeamFit method) {
  constexpr double kCutoff = 0.35;
  const std::vector<Sample> lobe = main_lobe(psf, kCutoff);
  if (lobe.size() < 5) {
    throw InvalidInput("the PSF main lobe above 0.35 covers only " + std::to_string(lobe.size()) +
                       " pixels, too few to fit a beam; image with smaller pixels or give "
                       "--beam-shape BMAJ BMIN BPA.");
  }
  const PixelGaussian estimate = fit_samples(lobe);
  if (method == BeamFit::kCasa) return estimate;
  // A box of 10 x the estimated FWHM, i.e. a half-width of 5 FWHM.
  return fit_samples(box_around_peak(psf, 5.0 * estimate.fwhm_major_pixels()));
}

namespace {

PixelGaussian fit_samples(const std::vector<Sample>& s) {
  // Start from a weighted linear fit of -ln(psf), then refine with Levenberg-Marquardt.
  std::array<std::array<double, 3>, 3> m{};
  std::array<double, 3> r{};
  for (const auto& p : s) {
    if (p.v <= 0 || (p.dx == 0 && p.dy == 0)) continue;
    const std::array<double, 3> g = {p.dx * p.dx, 2 * p.dx * p.dy, p.dy * p.dy};
    const double w = p.v * p.v;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] += w * g[i] * g[j];
      r[i] += w * g[i] * -std::log(p.v);
    }
  }
  std::array<double, 3> x{};
  Quadratic q{0.1, 0.0, 0.1};
  if (solve3(m, r, &x) && Quadratic{x[0], x[1], x[2]}.positive_definite()) q = {x[0], x[1], x[2]};

  double lambda = 1e-3;
  double err = sum_sq(s, q);
  for (int iter = 0; iter < 200; ++iter) {
    std::array<std::array<double, 3>, 3> jtj{};
    std::array<double, 3> jtr{};
    for (const auto& p : s) {
      const double g = std::exp(-(q.a * p.dx * p.dx + 2 * q.b * p.dx * p.dy + q.c * p.dy * p.dy));
      const std::array<double, 3> jac = {-p.dx * p.dx * g, -2 * p.dx * p.dy * g, -p.dy * p.dy * g};
      const double res = p.v - g;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) jtj[i][j] += jac[i] * jac[j];
        jtr[i] += jac[i] * res;
      }
    }
    bool improved = false;
    while (lambda < 1e12) {
      auto damped = jtj;
      for (int i = 0; i < 3; ++i) damped[i][i] *= 1.0 + lambda;
      std::array<double, 3> step{};
      if (!solve3(damped, jtr, &step)) break;
      const Quadratic trial{q.a + step[0], q.b + step[1], q.c + step[2]};
      const double trial_err = trial.positive_definite() ? sum_sq(s, trial) : INFINITY;
      if (trial_err < err) {
        const double rel = (err - trial_err) / std::max(err, 1e-300);
        q = trial;
        err = trial_err;
        lambda = std::max(lambda * 0.3, 1e-12);
        improved = rel > 1e-14;
        break;
      }
      lambda *= 10;
    }
    if (!improved) break;
  }
  // exp(-q) = exp(-0.5 d^T C^-1 d)  =>  C^-1 = 2 [[a, b], [b, c]].
  const double det = 4 * (q.a * q.c - q.b * q.b);
  return PixelGaussian{2 * q.c / det, -2 * q.b / det, 2 * q.a / det};
}

}  // namespace

SkyBeam to_sky(const PixelGaussian& g, const PixelToSky& t) {
  // C_sky = M C M^T, in deg^2 with axes (east, north).
  const double c[2][2] = {{g.cxx, g.cxy}, {g.cxy, g.cyy}};
  double mc[2][2], s[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) mc[i][j] = t.m[i][0] * c[0][j] + t.m[i][1] * c[1][j];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) s[i][j] = mc[i][0] * t.m[j][0] + mc[i][1] * t.m[j][1];
  const double mean = 0.5 * (s[0][0] + s[1][1]);
  const double d = std::sqrt(0.25 * (s[0][0] - s[1][1]) * (s[0][0] - s[1][1]) + s[0][1] * s[0][1]);
  SkyBeam b;
  b.bmaj_arcsec = std::sqrt(mean + d) * kFwhmPerSigma * 3600.0;
  b.bmin_arcsec = std::sqrt(std::max(mean - d, 0.0)) * kFwhmPerSigma * 3600.0;
  // Major axis at angle theta from east towards north; PA counts from north towards east.
  const double theta = 0.5 * std::atan2(2 * s[0][1], s[0][0] - s[1][1]);
  double pa = 90.0 - theta * 180.0 / std::numbers::pi;
  pa = std::fmod(pa, 180.0);
  if (pa < 0) pa += 180.0;
  b.bpa_deg = d == 0.0 ? 0.0 : pa;  // a circular beam has no axis: 0, as WSClean writes it
  return b;
}

PixelGaussian from_sky(const SkyBeam& b, const PixelToSky& t) {
  const double smaj = b.bmaj_arcsec / 3600.0 / kFwhmPerSigma;
  const double smin = b.bmin_arcsec / 3600.0 / kFwhmPerSigma;
  const double pa = b.bpa_deg * std::numbers::pi / 180.0;
  const double u[2] = {std::sin(pa), std::cos(pa)};   // major axis (east, north)
  const double v[2] = {std::cos(pa), -std::sin(pa)};  // minor axis
  double s[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) s[i][j] = smaj * smaj * u[i] * u[j] + smin * smin * v[i] * v[j];
  // C_pix = M^-1 C_sky M^-T.
  const double det = t.m[0][0] * t.m[1][1] - t.m[0][1] * t.m[1][0];
  const double inv[2][2] = {{t.m[1][1] / det, -t.m[0][1] / det}, {-t.m[1][0] / det, t.m[0][0] / det}};
  double is[2][2], c[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) is[i][j] = inv[i][0] * s[0][j] + inv[i][1] * s[1][j];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) c[i][j] = is[i][0] * inv[j][0] + is[i][1] * inv[j][1];
  return PixelGaussian{c[0][0], 0.5 * (c[0][1] + c[1][0]), c[1][1]};
}

KernelHalfSize gaussian_kernel_half_size(const PixelGaussian& g, std::size_t max_width, std::size_t max_height) {
  // exp(-0.5 r^2 / sigma^2) < 1e-6 beyond r = 5.3 sigma; the per-axis extent is sqrt(c_ii).
  const auto half = [](double var) { return static_cast<std::size_t>(std::ceil(5.3 * std::sqrt(var))); };
  return {std::min(half(g.cxx), max_width > 0 ? (max_width - 1) / 2 : 0),
          std::min(half(g.cyy), max_height > 0 ? (max_height - 1) / 2 : 0)};
}

HostImage gaussian_kernel(const PixelGaussian& g, std::size_t max_width, std::size_t max_height) {
  const auto [hw, hh] = gaussian_kernel_half_size(g, max_width, max_height);
  HostImage k(2 * hw + 1, 2 * hh + 1);
  for (std::size_t y = 0; y < k.height; ++y)
    for (std::size_t x = 0; x < k.width; ++x)
      k.at(x, y) = static_cast<float>(g.value(static_cast<double>(x) - static_cast<double>(hw),
                                              static_cast<double>(y) - static_cast<double>(hh)));
  return k;
}

}  // namespace gpuclean::clean

// WSClean 3.1's restoring-beam fit in one box (schaapcommon gaussianfitter.cc,
// Fit2DGaussianCentredInBox), reproduced from its description: see beam.hpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

#include "clean/beam.hpp"
#include "clean/solve3.hpp"

namespace gpuclean::clean {
namespace {

const double kFwhmPerSigma = 2.0 * std::sqrt(2.0 * std::log(2.0));

struct Sample {
  double dx, dy, v;
};

// WSClean's parameters: σx, σy (pixels) and a correlation β, for the centred model
// exp(−dx²/2σx² + β dx dy/σxσy − dy²/2σy²). The quadrant alone leaves the extent towards
// dx < 0 < dy free (β = −1 makes it infinite). In the quadratic form (a, b, c), kept positive
// definite and started from a log-linear fit, the fit crept along that edge (b² → ac, BMAJ 10⁷ px);
// in these parameters and from WSClean's start it lands where WSClean's does, beyond −1 if it does.
struct Params {
  double sx, sy, beta;
};

double model(const Sample& p, const Params& q) {
  const double u = p.dx / q.sx, w = p.dy / q.sy;
  return std::exp(-0.5 * u * u + q.beta * u * w - 0.5 * w * w);
}

double sum_sq(const std::vector<Sample>& s, const Params& q) {
  double e = 0;
  for (const auto& p : s) {
    const double r = p.v - model(p, q);
    e += r * r;
  }
  return std::isfinite(e) ? e : INFINITY;
}

// Levenberg-Marquardt from WSClean's start (σx = σy = the estimate, β = 0). WSClean's Jacobian has
// the β term of ∂/∂σx and ∂/∂σy negated; its columns are an invertible combination of the true
// ones, so it has the same fixed points (Jᵀr = 0): the minimum found here (measured: 1e-6). It stops
// when a step moves no parameter by more than 1e-7 (in units of the box's side) + 1e-7 relative;
// here 1e-10, so that the last digits are its own. Where its wrong Jacobian makes it crawl (β near
// ±1) it stops at 500 iterations short of the minimum: BMIN up to 1.5 % off (test_image_cli's MS).
Params fit(const std::vector<Sample>& s, double initial_sigma, double box_scale) {
  Params q{initial_sigma, initial_sigma, 0.0};
  double err = sum_sq(s, q);
  double lambda = 1e-3;
  for (int iter = 0; iter < 500; ++iter) {
    std::array<std::array<double, 3>, 3> jtj{};
    std::array<double, 3> jtr{};
    for (const auto& p : s) {
      const double u = p.dx / q.sx, w = p.dy / q.sy, g = model(p, q);
      const std::array<double, 3> jac = {(u * u - q.beta * u * w) / q.sx * g, (w * w - q.beta * u * w) / q.sy * g,
                                         u * w * g};
      const double r = p.v - g;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) jtj[i][j] += jac[i] * jac[j];
        jtr[i] += jac[i] * r;
      }
    }
    bool accepted = false, converged = false;
    while (lambda < 1e16) {
      auto damped = jtj;
      for (int i = 0; i < 3; ++i) damped[i][i] *= 1.0 + lambda;
      std::array<double, 3> step{};
      if (!solve3(damped, jtr, &step)) break;
      const Params trial{q.sx + step[0], q.sy + step[1], q.beta + step[2]};
      const double trial_err = sum_sq(s, trial);
      if (trial_err < err) {
        const double tol = 1e-10;
        converged = std::abs(step[0]) < tol * (box_scale + std::abs(q.sx)) &&
                    std::abs(step[1]) < tol * (box_scale + std::abs(q.sy)) &&
                    std::abs(step[2]) < tol * (1 + std::abs(q.beta));
        q = trial;
        err = trial_err;
        lambda = std::max(lambda * 0.1, 1e-15);
        accepted = true;
        break;
      }
      lambda *= 10;
    }
    if (!accepted || converged) break;
  }
  return q;
}

// Covariance [[σx², βσxσy], [βσxσy, σy²]] / (1 − β²); as WSClean, each axis from the magnitude of
// its eigenvalue, so that |β| ≥ 1 (possible: the quadrant alone does not bound it) still gives a beam.
PixelGaussian to_pixel_gaussian(const Params& q) {
  const double f = 1.0 - q.beta * q.beta;
  const double cxx = q.sx * q.sx / f, cxy = q.beta * q.sx * q.sy / f, cyy = q.sy * q.sy / f;
  const double mean = 0.5 * (cxx + cyy), d = std::sqrt(0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy);
  const double e1 = mean + d, e2 = mean - d;
  // β = ±1 exactly: WSClean falls back to a circular beam (of √|σx| in its box units); here σx.
  if (!std::isfinite(e1) || !std::isfinite(e2)) return PixelGaussian{q.sx * q.sx, 0, q.sx * q.sx};
  if (e2 > 0) return PixelGaussian{cxx, cxy, cyy};
  // Eigenvector of e1: the major axis is (cos θ, sin θ), θ = ½ atan2(2cxy, cxx − cyy).
  const double th = 0.5 * std::atan2(2 * cxy, cxx - cyy), c = std::cos(th), sn = std::sin(th);
  const double a1 = std::abs(e1), a2 = std::abs(e2);
  return PixelGaussian{a1 * c * c + a2 * sn * sn, (a1 - a2) * c * sn, a1 * sn * sn + a2 * c * c};
}

// The box's quadrant dx, dy >= 0 only: the pixels WSClean's model does not zero (see beam.hpp).
std::vector<Sample> quadrant(const PreparedPsf& psf, std::size_t box_width, std::size_t box_height,
                             bool skip_negatives) {
  const HostImage& im = psf.image;
  std::vector<Sample> samples;
  const auto bw = static_cast<std::ptrdiff_t>(box_width), bh = static_cast<std::ptrdiff_t>(box_height);
  // The box's quadrant dx, dy ≥ 0 only: the pixels WSClean's model does not zero (see the header).
  for (std::ptrdiff_t dy = 0; dy < bh - bh / 2; ++dy)
    for (std::ptrdiff_t dx = 0; dx < bw - bw / 2; ++dx) {
      const std::ptrdiff_t x = static_cast<std::ptrdiff_t>(psf.peak_x) + dx;
      const std::ptrdiff_t y = static_cast<std::ptrdiff_t>(psf.peak_y) + dy;
      if (x >= static_cast<std::ptrdiff_t>(im.width) || y >= static_cast<std::ptrdiff_t>(im.height)) continue;
      const double v = im.at(static_cast<std::size_t>(x), static_cast<std::size_t>(y));
      if (skip_negatives && v < 0) continue;  // WSClean 3.7's -fit-beam-without-negatives
      samples.push_back({static_cast<double>(dx), static_cast<double>(dy), v});
    }
  return samples;
}

// One σ by Levenberg-Marquardt on the circular model exp(-(dx² + dy²)/2σ²), from the estimate.
double fit_circular(const std::vector<Sample>& s, double initial_sigma, double box_scale) {
  const auto error = [&](double sigma) {
    double e = 0;
    for (const Sample& p : s) {
      const double r = p.v - std::exp(-(p.dx * p.dx + p.dy * p.dy) / (2 * sigma * sigma));
      e += r * r;
    }
    return std::isfinite(e) ? e : INFINITY;
  };
  double sigma = initial_sigma, err = error(sigma), lambda = 1e-3;
  for (int iter = 0; iter < 500; ++iter) {
    double jtj = 0, jtr = 0;
    for (const Sample& p : s) {
      const double d2 = p.dx * p.dx + p.dy * p.dy, g = std::exp(-d2 / (2 * sigma * sigma));
      const double jac = d2 / (sigma * sigma * sigma) * g;
      jtj += jac * jac;
      jtr += jac * (p.v - g);
    }
    bool accepted = false, converged = false;
    while (lambda < 1e16 && jtj > 0) {
      const double step = jtr / (jtj * (1.0 + lambda));
      const double trial = sigma + step, trial_err = error(trial);
      if (trial_err < err) {
        converged = std::abs(step) < 1e-10 * (box_scale + std::abs(sigma));
        sigma = trial, err = trial_err;
        lambda = std::max(lambda * 0.1, 1e-15);
        accepted = true;
        break;
      }
      lambda *= 10;
    }
    if (!accepted || converged) break;
  }
  return std::abs(sigma);
}

}  // namespace

PixelGaussian fit_psf_beam_wsclean_box(const PreparedPsf& psf, std::size_t box_width, std::size_t box_height,
                                       double initial_fwhm_pixels, bool skip_negatives) {
  const std::vector<Sample> samples = quadrant(psf, box_width, box_height, skip_negatives);
  // WSClean works in units of the box's mean side, (w + h) / 2 in integers; its absolute tolerance is in them.
  const double box_scale = static_cast<double>((box_width + box_height) / 2);
  return to_pixel_gaussian(fit(samples, initial_fwhm_pixels / kFwhmPerSigma, box_scale));
}

double fit_psf_beam_wsclean_circular(const PreparedPsf& psf, std::size_t box_width, std::size_t box_height,
                                     double initial_fwhm_pixels) {
  const std::vector<Sample> samples = quadrant(psf, box_width, box_height, false);
  const double box_scale = static_cast<double>((box_width + box_height) / 2);
  return fit_circular(samples, initial_fwhm_pixels / kFwhmPerSigma, box_scale) * kFwhmPerSigma;
}

}  // namespace gpuclean::clean

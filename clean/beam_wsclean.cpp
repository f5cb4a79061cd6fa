// WSClean 3.1's restoring-beam fit in one box (schaapcommon gaussianfitter.cc,
// Fit2DGaussianCentredInBox and Fit2DCircularGaussianCentredInBox), reproduced from its
// behaviour: see beam.hpp. The solver is GSL's lmsder, as WSClean calls it (clean/beam_lmsder.hpp).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "clean/beam.hpp"
#include "clean/beam_lmsder.hpp"

namespace gpuclean::clean {
namespace {

// WSClean's σ → FWHM factor, a long double: its products round once, to the double they are stored in.
const long double kSigmaToBeam = 2.0L * std::sqrt(2.0L * std::log(2.0L));

// The fit's coordinates, as WSClean forms them: (i − mid) in size_t, so that every pixel left of or
// below the box's centre wraps to about 2⁶⁴, times 1/s with s = (w + h) / 2 in integers. The model is
// then 0 there (exp of −10³⁰ or so): only the quadrant dx, dy ≥ 0 of the box is fitted, while the
// other pixels add their constant squares to |f|. Far enough from 1 in β (> 1 + ~10⁻³⁰), the pixels
// with both coordinates wrapped overflow instead (an infinite residual): GSL rejects that step.
std::vector<double> wrapped_coordinates(std::size_t n, double scale) {
  const auto mid = static_cast<std::size_t>(static_cast<int>(n / 2));
  std::vector<double> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<double>(i - mid) * scale;
  return c;
}

// exp() of anything below this is exactly 0 (the smallest subnormal is e^−744.4): not called there,
// which spares three quarters of the box (the wrapped pixels) the time of an exp.
constexpr double kExpUnderflow = -746.0;

class BoxProblem : public lmsder::Problem {
 public:
  BoxProblem(const HostImage& psf, std::size_t box_width, std::size_t box_height, bool circular, bool skip_negatives)
      : w_(box_width), h_(box_height), circular_(circular), skip_negatives_(skip_negatives) {
    // The box around the image's centre: columns (W − w)/2 onwards, rows (H − h)/2 to (H + h)/2.
    const std::size_t x0 = (psf.width - w_) / 2, y0 = (psf.height - h_) / 2;
    box_.resize(w_ * h_);
    for (std::size_t y = 0; y < h_; ++y)
      for (std::size_t x = 0; x < w_; ++x) box_[y * w_ + x] = psf.at(x0 + x, y0 + y);
    scale_factor_ = (w_ + h_) / 2;
    const double scale = 1.0 / static_cast<double>(scale_factor_);
    xs_ = wrapped_coordinates(w_, scale);
    ys_ = wrapped_coordinates(h_, scale);
  }

  std::size_t parameters() const override { return circular_ ? 1 : 3; }
  std::size_t rows() const override { return w_ * h_; }
  std::size_t scale_factor() const { return scale_factor_; }

  void evaluate(const double* p, bool with_jacobian, lmsder::Evaluation& out) const override {
    const std::size_t np = parameters();
    out.f.resize(w_ * h_);
    for (std::size_t c = 0; c < np; ++c) out.jacobian[c].resize(with_jacobian ? w_ * h_ : 0);
    std::size_t k = 0;
    for (std::size_t yi = 0; yi < h_; ++yi) {
      const double y = ys_[yi];
      for (std::size_t xi = 0; xi < w_; ++xi, ++k) {
        const double x = xs_[xi];
        const double v = box_[k];
        double j[3] = {0, 0, 0};
        double e;
        if (circular_) {
          const double s = p[0];
          const double exponent = (-x * x - y * y) / (2.0 * s * s);
          const double g = exponent < kExpUnderflow ? 0.0 : std::exp(exponent);
          e = g - v;
          if (with_jacobian) j[0] = ((x * x + y * y) / (s * s * s)) * g;
        } else {
          const double sx = p[0], sy = p[1], beta = p[2];
          const bool skip = skip_negatives_ && box_[k] < 0.0f;
          const double exponent = -x * x / (2.0 * sx * sx) + beta * x * y / (sx * sy) - y * y / (2.0 * sy * sy);
          const double g = exponent < kExpUnderflow ? 0.0 : std::exp(exponent);
          e = skip ? 0.0 : g - v;
          if (with_jacobian && !skip) {
            // WSClean's derivatives, the β terms of ∂/∂σx and ∂/∂σy with the sign flipped.
            j[0] = (beta * x * y / (sx * sx * sy) + x * x / (sx * sx * sx)) * g;
            j[1] = (beta * x * y / (sy * sy * sx) + y * y / (sy * sy * sy)) * g;
            j[2] = x * y / (sx * sy) * g;
          }
        }
        out.f[k] = e;
        if (with_jacobian)
          for (std::size_t c = 0; c < np; ++c) out.jacobian[c][k] = j[c];
      }
    }
  }

 private:
  std::size_t w_, h_, scale_factor_ = 1;
  bool circular_, skip_negatives_;
  std::vector<float> box_;
  std::vector<double> xs_, ys_;
};

// gsl_multifit_test_delta's tolerances and the iteration limit WSClean runs lmsder with.
constexpr double kTolerance = 1.0e-7;
constexpr int kMaxIterations = 500;

// WSClean's conversion of (σx, σy, β) to FWHMs and an angle: the covariance
// [[σx², βσxσy], [βσxσy, σy²]] / (1 − β²), its eigenvalues (tr/2 ± √(tr²/4 − det)) and the
// eigenvector (c₂₂ − e, −c₂₁), each axis from the magnitude of its eigenvalue (|β| ≥ 1 gives a
// negative one), the larger the major axis; the angle −atan2(vx, vy). Where the eigenvalues are
// not finite (β = ±1), a circle of √|σx|.
WscleanEllipse to_ellipse(double sx, double sy, double beta) {
  const double beta_factor = 1.0 - beta * beta;
  const double c0 = sx * sx / beta_factor, c1 = beta * sx * sy / beta_factor, c3 = sy * sy / beta_factor;
  const double tr = c0 + c3, det = c0 * c3 - c1 * c1;
  const double term = std::sqrt(tr * tr * 0.25 - det), half = tr * 0.5;
  const double e1 = half + term, e2 = half - term;
  double v1[2], v2[2];
  const double limit = std::min(std::fabs(e1), std::fabs(e2)) * 1e-6;
  if (std::fabs(c1) > limit) {
    v1[0] = c3 - e1, v1[1] = -c1;
    v2[0] = c3 - e2, v2[1] = -c1;
  } else {  // c₂₁ = c₁₂ here: the same branch either way
    const double err1 = c0 - e1, err2 = c0 - e2;
    const bool first_is_x = err1 * err1 < err2 * err2;
    v1[0] = first_is_x ? 1.0 : 0.0, v1[1] = first_is_x ? 0.0 : 1.0;
    v2[0] = first_is_x ? 0.0 : 1.0, v2[1] = first_is_x ? 1.0 : 0.0;
  }
  WscleanEllipse r;
  if (std::isfinite(e1)) {
    r.major = static_cast<double>(std::sqrt(std::fabs(e1)) * kSigmaToBeam);
    r.minor = static_cast<double>(std::sqrt(std::fabs(e2)) * kSigmaToBeam);
    if (r.major < r.minor) {
      std::swap(r.major, r.minor);
      v1[0] = v2[0], v1[1] = v2[1];
    }
    r.position_angle = -std::atan2(v1[0], v1[1]);
  } else {
    r.major = r.minor = static_cast<double>(std::sqrt(std::fabs(sx)) * kSigmaToBeam);
    r.position_angle = 0.0;
  }
  return r;
}

}  // namespace

WscleanEllipse fit_psf_beam_wsclean_box(const HostImage& psf, std::size_t box_width, std::size_t box_height,
                                        double initial_fwhm_pixels, bool skip_negatives) {
  const BoxProblem problem(psf, box_width, box_height, false, skip_negatives);
  const double sf = static_cast<double>(problem.scale_factor());
  const double s0 = initial_fwhm_pixels / (sf * static_cast<double>(kSigmaToBeam));
  const double x0[3] = {s0, s0, 0.0};
  const lmsder::Result fit = lmsder::solve(problem, x0, kTolerance, kTolerance, kMaxIterations);
  WscleanEllipse e = to_ellipse(fit.x[0], fit.x[1], fit.x[2]);
  e.major *= sf;
  e.minor *= sf;
  return e;
}

double fit_psf_beam_wsclean_circular(const HostImage& psf, std::size_t box_width, std::size_t box_height,
                                     double initial_fwhm_pixels) {
  const BoxProblem problem(psf, box_width, box_height, true, false);
  const std::size_t sf = problem.scale_factor();
  const double x0[1] = {initial_fwhm_pixels / (static_cast<double>(sf) * static_cast<double>(kSigmaToBeam))};
  const lmsder::Result fit = lmsder::solve(problem, x0, kTolerance, kTolerance, kMaxIterations);
  return static_cast<double>(fit.x[0] * kSigmaToBeam * static_cast<long double>(sf));
}

}  // namespace gpuclean::clean

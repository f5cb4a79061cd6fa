// clean/beam_lmsder (GSL's gsl_multifit_fdfsolver_lmsder, driven as WSClean drives it) on MINPACK's
// classic test problems (Moré, Garbow & Hillstrom 1981), run as WSClean runs lmsder (test_delta
// 1e-7, 1e-7; at most 500 iterations): the driver's iteration count, stopping rule and end points.
// The expected figures were measured with GSL 2.7 (Debian 12's libgsl27, which WSClean 3.1 links).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "clean/beam_lmsder.hpp"

namespace lm = gpuclean::clean::lmsder;

namespace {

// Residuals r(x) and Jacobian of a small dense problem; every row kept.
class Classic : public lm::Problem {
 public:
  enum Kind { kRosenbrock, kFreudensteinRoth, kHelicalValley };
  explicit Classic(Kind k) : kind_(k) {}
  std::size_t parameters() const override { return kind_ == kHelicalValley ? 3 : 2; }
  std::size_t rows() const override { return kind_ == kHelicalValley ? 3 : 2; }
  void evaluate(const double* x, bool with_jacobian, lm::Evaluation& out) const override {
    const double a = x[0], b = x[1];
    double r[3] = {0, 0, 0}, j[3][3] = {};
    std::size_t n = 2;
    switch (kind_) {
      case kRosenbrock:
        r[0] = 10 * (b - a * a), r[1] = 1 - a;
        j[0][0] = -20 * a, j[0][1] = 10, j[1][0] = -1, j[1][1] = 0;
        break;
      case kFreudensteinRoth:
        r[0] = -13 + a + ((5 - b) * b - 2) * b, r[1] = -29 + a + ((b + 1) * b - 14) * b;
        j[0][0] = 1, j[0][1] = b * (10 - 3 * b) - 2, j[1][0] = 1, j[1][1] = b * (3 * b + 2) - 14;
        break;
      case kHelicalValley: {
        n = 3;
        const double c = x[2], pi = std::numbers::pi;
        const double theta = (a > 0 ? std::atan(b / a) : std::atan(b / a) + pi) / (2 * pi);
        const double r2 = a * a + b * b, rr = std::sqrt(r2);
        r[0] = 10 * (c - 10 * theta), r[1] = 10 * (rr - 1), r[2] = c;
        j[0][0] = 100 * b / (2 * pi * r2), j[0][1] = -100 * a / (2 * pi * r2), j[0][2] = 10;
        j[1][0] = 10 * a / rr, j[1][1] = 10 * b / rr, j[1][2] = 0;
        j[2][0] = 0, j[2][1] = 0, j[2][2] = 1;
        break;
      }
    }
    out.f.assign(r, r + n);
    for (std::size_t c = 0; c < parameters(); ++c) {
      out.jacobian[c].clear();
      if (with_jacobian)
        for (std::size_t i = 0; i < n; ++i) out.jacobian[c].push_back(j[i][c]);
    }
  }

 private:
  Kind kind_;
};

lm::Result run(Classic::Kind k, std::initializer_list<double> x0) {
  return lm::solve(Classic(k), std::data(x0), 1e-7, 1e-7, 500);
}

}  // namespace

// GSL reaches (1, 1) exactly, where |f| = 0 makes each further iteration return at once with the
// last step left in dx, which never passes test_delta: all 500 iterations, as GSL.
TEST(BeamLmsder, RosenbrockAsGsl) {
  const lm::Result r = run(Classic::kRosenbrock, {-1.2, 1.0});
  EXPECT_EQ(r.iterations, 500);
  EXPECT_EQ(r.x[0], 1.0);
  EXPECT_EQ(r.x[1], 1.0);
}

// From (0.5, −2) GSL stops in the local minimum (11.41…, −0.8968…) after 16 iterations.
TEST(BeamLmsder, FreudensteinRothAsGsl) {
  const lm::Result r = run(Classic::kFreudensteinRoth, {0.5, -2.0});
  EXPECT_EQ(r.iterations, 16);
  EXPECT_EQ(r.status, lm::kSuccess);
  EXPECT_NEAR(r.x[0], 11.412779000867474, 1e-13);
  EXPECT_NEAR(r.x[1], -0.89680525441906178, 1e-14);
}

// Three parameters, the column pivoting at work: (1, 0, 0) in 8 iterations.
TEST(BeamLmsder, HelicalValleyAsGsl) {
  const lm::Result r = run(Classic::kHelicalValley, {-1.0, 0.0, 0.0});
  EXPECT_EQ(r.iterations, 8);
  EXPECT_EQ(r.status, lm::kSuccess);
  EXPECT_NEAR(r.x[0], 1.0, 1e-15);
  EXPECT_NEAR(r.x[1], -6.2433020103797489e-18, 1e-20);
  EXPECT_NEAR(r.x[2], 0.0, 1e-20);
}

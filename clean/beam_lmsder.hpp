#pragma once
// The solver of WSClean's restoring-beam fit: GSL's gsl_multifit_fdfsolver_lmsder (Debian's
// libgsl, the library WSClean 3.1 links), driven as WSClean drives it. On an elongated or
// snapshot PSF the fit is near-degenerate (only a quadrant of the box counts, see beam.hpp) and
// where it stops, often at the iteration limit, depends on the solver's path: so the same solver.
#include <array>
#include <cstddef>
#include <vector>

namespace gpuclean::clean::lmsder {

constexpr std::size_t kMaxParameters = 3;

/// A least-squares problem's residuals f (model − data) at a point, every row, and its Jacobian.
struct Evaluation {
  std::vector<double> f;                                     ///< rows()
  std::array<std::vector<double>, kMaxParameters> jacobian;  ///< columns of rows() each
};

class Problem {
 public:
  virtual ~Problem() = default;
  virtual std::size_t parameters() const = 0;
  virtual std::size_t rows() const = 0;
  /// At x: the residuals; with `with_jacobian` also the Jacobian.
  virtual void evaluate(const double* x, bool with_jacobian, Evaluation& out) const = 0;
};

/// GSL's status codes that end the iteration (gsl_errno.h).
enum Status { kContinue = -2, kSuccess = 0, kNoProgress = 27, kTolF = 29, kTolX = 30, kTolG = 31 };

struct Result {
  std::array<double, kMaxParameters> x{};
  int iterations = 0;
  int status = kSuccess;
};

/// WSClean's driver: gsl_multifit_fdfsolver_set at x0, then iterate until an iteration fails, the
/// step passes gsl_multifit_test_delta(dx, x, epsabs, epsrel) or max_iterations are done.
Result solve(const Problem& problem, const double* x0, double epsabs, double epsrel, int max_iterations);

}  // namespace gpuclean::clean::lmsder

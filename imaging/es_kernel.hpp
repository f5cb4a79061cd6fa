#pragma once
// The exponential-of-semicircle gridding kernel and its correction (imaging-plan.md §4.1 step 6, §4.2).

#include <vector>

namespace gpuclean::imaging {

/// φ(x) = exp(β·W·((1 − x²)^e0 − 1)) on |x| < 1 (x in units of half the support), 0 outside.
/// (β, e0) per (W, σ) are ducc0's fitted values (its KernelDB), chosen the way ducc chooses them.
class EsKernel {
 public:
  EsKernel(int support, double sigma, double epsilon, double beta, double e0, double correction_range);

  int support() const { return support_; }
  double sigma() const { return sigma_; }
  /// ducc's measured error of one dimension for this kernel at this σ.
  double epsilon() const { return epsilon_; }
  double beta() const { return beta_; }  ///< β of the table row (φ uses β·W)
  double e0() const { return e0_; }
  /// Largest c(s) over |s| ≤ 1/(2σ): how much the correction amplifies round-off at the image edge.
  double correction_range() const { return correction_range_; }

  double operator()(double x) const;
  /// c(s) = 1 / [(W/2) ∫_{−1}^{1} φ(y) cos(π W s y) dy], by Gauss–Legendre quadrature: the inverse
  /// of the kernel's Fourier transform at s (cycles per grid cell).
  double correction(double s) const;
  /// The quadrature behind correction(): nodes x_i on (0, 1) and weights w_i·φ(x_i)·W/2, for
  /// evaluating c(s) the same way elsewhere (the GPU gridder).
  const std::vector<double>& quadrature_nodes() const { return nodes_; }
  const std::vector<double>& quadrature_weights() const { return weighted_phi_; }

 private:
  int support_;
  double sigma_, epsilon_, beta_, e0_, correction_range_;
  std::vector<double> nodes_, weighted_phi_;  // quadrature nodes on (0, 1) and w_i·φ(x_i)·W/2
};

/// The table row for exactly (W, σ); throws std::invalid_argument when there is none.
EsKernel es_kernel(int support, double sigma);

/// ducc's choice for a per-dimension error: for each W ≤ 8 (the float limit) the smallest σ whose
/// row reaches `epsilon_per_dimension` and whose correction range is below 10. Sorted by W.
std::vector<EsKernel> es_kernel_candidates(double epsilon_per_dimension);

/// The per-dimension error ducc asks of the kernel for a total error ε: ε/3 with w-stacking, ε/2 without.
double per_dimension_epsilon(double epsilon, bool wstacking);

}  // namespace gpuclean::imaging

#pragma once
// A 3 × 3 linear solve by Gauss-Jordan elimination with partial pivoting, for the beam fits'
// Levenberg–Marquardt steps (clean/beam.cpp, clean/beam_wsclean.cpp).
#include <array>
#include <cmath>
#include <utility>

namespace gpuclean::clean {

/// x = m⁻¹ r; false (x untouched) when m is singular or not finite.
inline bool solve3(std::array<std::array<double, 3>, 3> m, std::array<double, 3> r, std::array<double, 3>* x) {
  for (int col = 0; col < 3; ++col) {
    int piv = col;
    for (int row = col + 1; row < 3; ++row)
      if (std::abs(m[row][col]) > std::abs(m[piv][col])) piv = row;
    if (!(std::abs(m[piv][col]) > 1e-300)) return false;
    std::swap(m[col], m[piv]);
    std::swap(r[col], r[piv]);
    for (int row = 0; row < 3; ++row) {
      if (row == col) continue;
      const double f = m[row][col] / m[col][col];
      for (int k = col; k < 3; ++k) m[row][k] -= f * m[col][k];
      r[row] -= f * r[col];
    }
  }
  for (int i = 0; i < 3; ++i) (*x)[i] = r[i] / m[i][i];
  return true;
}

}  // namespace gpuclean::clean

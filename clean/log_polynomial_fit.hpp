#pragma once
// --fit-spectral-log-pol N (WSClean's -fit-spectral-log-pol): a component's channel values are
// replaced by the least-squares fit (weights w; SpectralFit passes 1 for every channel, as
// WSClean's fit is unweighted) of
//   S(nu) = s 10^(a_0 + a_1 x + ... + a_{N-1} x^{N-1}),  x = log10(nu / nu_0),
// with s the sign of their weighted mean (a logarithmic polynomial has one sign). The terms
// reported are those of WSClean's source list with LogarithmicSI = true: S(nu_0) = s 10^a_0, then
// a_1 (the spectral index), a_2, ...
//
// The fit is not linear in the values: it starts from the weighted straight-line fit of
// log10 |v| over the channels of the mean's sign (weights w v^2, the errors of a logarithm) and
// runs Levenberg-Marquardt on the values themselves, in double, with a fixed rule, so that the
// CPU reference and the GPU's minor cycle (one thread per component) make the same steps. exp
// and log round differently on the two, so they agree to rounding, not bit for bit.

#include <cmath>

#ifdef __CUDACC__
#define GPUCLEAN_HOST_DEVICE __host__ __device__
#else
#define GPUCLEAN_HOST_DEVICE
#endif

namespace gpuclean::clean {

/// The most terms --fit-spectral-log-pol takes.
inline constexpr int kMaxLogTerms = 6;

namespace log_fit_detail {

// Solves the K x K system m a = b (row-major, K <= kMaxLogTerms) by Gaussian elimination with
// partial pivoting; false when it is singular.
GPUCLEAN_HOST_DEVICE inline bool solve(double* m, double* b, int k) {
  for (int col = 0; col < k; ++col) {
    int pivot = col;
    for (int r = col + 1; r < k; ++r)
      if (fabs(m[r * k + col]) > fabs(m[pivot * k + col])) pivot = r;
    if (!(fabs(m[pivot * k + col]) > 1e-300)) return false;
    if (pivot != col) {
      for (int j = 0; j < k; ++j) {
        const double t = m[col * k + j];
        m[col * k + j] = m[pivot * k + j];
        m[pivot * k + j] = t;
      }
      const double t = b[col];
      b[col] = b[pivot];
      b[pivot] = t;
    }
    for (int r = col + 1; r < k; ++r) {
      const double f = m[r * k + col] / m[col * k + col];
      for (int j = col; j < k; ++j) m[r * k + j] -= f * m[col * k + j];
      b[r] -= f * b[col];
    }
  }
  for (int r = k - 1; r >= 0; --r) {
    double s = b[r];
    for (int j = r + 1; j < k; ++j) s -= m[r * k + j] * b[j];
    b[r] = s / m[r * k + r];
  }
  return true;
}

// a_0 + a_1 x + ... (Horner), kept within 10^+-30.
GPUCLEAN_HOST_DEVICE inline double exponent(const double* a, int k, double x) {
  double e = 0.0;
  for (int j = k - 1; j >= 0; --j) e = e * x + a[j];
  return fmin(fmax(e, -30.0), 30.0);
}

GPUCLEAN_HOST_DEVICE inline double cost(const float* v, const double* x, const double* w, int n, const double* a,
                                        int k, double sign) {
  double c = 0.0;
  for (int i = 0; i < n; ++i) {
    const double r = sign * pow(10.0, exponent(a, k, x[i])) - static_cast<double>(v[i]);
    c += w[i] * r * r;
  }
  return c;
}

}  // namespace log_fit_detail

/// Fits `channels` values v (weights w > 0, x = log10(nu / nu_0) of each) with `terms` terms:
/// fitted[c] receives the fit at channel c, out_terms (when not null) S(nu_0), a_1, ... All zero
/// when the weighted mean is zero.
GPUCLEAN_HOST_DEVICE inline void fit_log_polynomial(const float* v, const double* x, const double* w, int channels,
                                                    int terms, float* fitted, double* out_terms) {
  using namespace log_fit_detail;
  const int k = terms < 1 ? 1 : (terms > kMaxLogTerms ? kMaxLogTerms : terms);
  double sw = 0.0, swv = 0.0;
  for (int i = 0; i < channels; ++i) {
    sw += w[i];
    swv += w[i] * static_cast<double>(v[i]);
  }
  double a[kMaxLogTerms] = {};
  if (!(swv != 0.0) || !(sw > 0.0)) {
    for (int i = 0; i < channels; ++i) fitted[i] = 0.0f;
    if (out_terms)
      for (int j = 0; j < k; ++j) out_terms[j] = 0.0;
    return;
  }
  const double sign = swv > 0.0 ? 1.0 : -1.0;
  // The start: log10 |v| against x over the channels of the mean's sign, weights w v^2.
  double m[kMaxLogTerms * kMaxLogTerms] = {}, b[kMaxLogTerms] = {};
  int used = 0;
  for (int i = 0; i < channels; ++i) {
    const double u = sign * static_cast<double>(v[i]);
    if (!(u > 0.0)) continue;
    ++used;
    const double y = log10(u), wi = w[i] * u * u;
    double pr = 1.0;
    for (int r = 0; r < k; ++r, pr *= x[i]) {
      double pc = 1.0;
      for (int c = 0; c < k; ++c, pc *= x[i]) m[r * k + c] += wi * pr * pc;
      b[r] += wi * pr * y;
    }
  }
  if (used >= k && solve(m, b, k)) {
    for (int j = 0; j < k; ++j) a[j] = b[j];
  } else {
    a[0] = log10(fabs(swv / sw));
  }
  // Levenberg-Marquardt on the values: J_ij = S_i ln(10) x_i^j.
  const double ln10 = 2.302585092994046;
  double lambda = 1e-3, c0 = cost(v, x, w, channels, a, k, sign);
  for (int it = 0; it < 100 && lambda < 1e12; ++it) {
    double jtj[kMaxLogTerms * kMaxLogTerms] = {}, jtr[kMaxLogTerms] = {};
    for (int i = 0; i < channels; ++i) {
      const double s = sign * pow(10.0, exponent(a, k, x[i]));
      const double r = static_cast<double>(v[i]) - s, g = s * ln10;
      double pr = 1.0;
      for (int rr = 0; rr < k; ++rr, pr *= x[i]) {
        double pc = 1.0;
        for (int cc = 0; cc < k; ++cc, pc *= x[i]) jtj[rr * k + cc] += w[i] * g * pr * g * pc;
        jtr[rr] += w[i] * g * pr * r;
      }
    }
    double step[kMaxLogTerms], sys[kMaxLogTerms * kMaxLogTerms];
    for (int rr = 0; rr < k; ++rr) {
      step[rr] = jtr[rr];
      for (int cc = 0; cc < k; ++cc) sys[rr * k + cc] = jtj[rr * k + cc] * (rr == cc ? 1.0 + lambda : 1.0);
    }
    if (!solve(sys, step, k)) {
      lambda *= 10.0;
      continue;
    }
    double trial[kMaxLogTerms], largest = 0.0;
    for (int j = 0; j < k; ++j) {
      trial[j] = a[j] + step[j];
      largest = fmax(largest, fabs(step[j]));
    }
    const double c1 = cost(v, x, w, channels, trial, k, sign);
    if (c1 <= c0) {
      for (int j = 0; j < k; ++j) a[j] = trial[j];
      c0 = c1;
      lambda = fmax(lambda * 0.1, 1e-12);
      if (largest < 1e-12) break;
    } else {
      lambda *= 10.0;
    }
  }
  for (int i = 0; i < channels; ++i) fitted[i] = static_cast<float>(sign * pow(10.0, exponent(a, k, x[i])));
  if (out_terms) {
    out_terms[0] = sign * pow(10.0, a[0]);
    for (int j = 1; j < k; ++j) out_terms[j] = a[j];
  }
}

}  // namespace gpuclean::clean

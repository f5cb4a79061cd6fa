// The randomized backend's window statistics: binomial pivot windows, the chain's windows and
// their buffers, and the sample sizes (host arithmetic only).

#include <algorithm>
#include <cmath>

#include "select/backends/randomized_select.hpp"
#include "select/backends/randomized_selector.hpp"

namespace gpuclean::select {
namespace {

double log_binomial_pmf(std::size_t s, std::size_t i, double p) {
  if (p <= 0.0) return i == 0 ? 0.0 : -INFINITY;
  if (p >= 1.0) return i == s ? 0.0 : -INFINITY;
  const double ds = static_cast<double>(s), di = static_cast<double>(i);
  return std::lgamma(ds + 1) - std::lgamma(di + 1) - std::lgamma(ds - di + 1) + di * std::log(p) +
         (ds - di) * std::log1p(-p);
}

// The buffer of a window of w sample buckets (see ChainWindow).
std::size_t window_cap(std::size_t n, std::size_t s, double w, double factor) {
  const double buckets = 0.5 * factor * (2.0 * w + 4.0 * std::sqrt(w) + 8.0);
  return std::min<std::size_t>(n, static_cast<std::size_t>(buckets * static_cast<double>(n) / static_cast<double>(s + 1)) + 1024);
}

}  // namespace

namespace detail {

std::size_t splitter_count(std::size_t n, double per_sqrt_n) {
  const auto s = static_cast<std::size_t>(std::ceil(per_sqrt_n * std::sqrt(static_cast<double>(n))));
  return std::min(n, std::max<std::size_t>(s, 256));
}

double normal_quantile_two_sided(double p) {
  double lo = 0.0, hi = 40.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (std::erfc(mid / std::sqrt(2.0)) > 1.0 - p) lo = mid; else hi = mid;
  }
  return hi;
}

double robust_z(const RandomizedTuning& t) {
  const double miss = 1.0 - t.p_k;
  return normal_quantile_two_sided(1.0 - miss * miss);
}

}  // namespace detail

std::size_t chain_samples(std::size_t n, const RandomizedTuning& t) {
  const double want = std::sqrt(static_cast<double>(n));
  std::size_t s = 4096;
  while (s < 16384 && (s < t.chain_min_samples || (static_cast<double>(s) < want && s < t.chain_max_samples))) s *= 2;
  return s;
}

ChainWindow chain_window(std::size_t n, std::size_t k, std::size_t samples, double p_k, double factor) {
  const PivotWindow w = binomial_pivot_window(n, k, samples, p_k);
  const auto ls = static_cast<long long>(samples);
  const long long m = std::clamp<long long>(
      static_cast<long long>(static_cast<double>(k) / (static_cast<double>(n) / static_cast<double>(samples + 1))), 0,
      ls);
  ChainWindow c;
  c.first = w.first;
  c.last = w.last;
  c.centre = std::clamp<long long>(m, std::max<long long>(w.first, 0), std::min<long long>(w.last, ls - 1));
  c.cap_b = window_cap(n, samples, static_cast<double>(w.last - w.first + 1), factor);
  return c;
}

PivotWindow binomial_pivot_window(std::size_t n, std::size_t k, std::size_t splitters, double p_k) {
  const double p = std::clamp(static_cast<double>(k) / static_cast<double>(n), 0.0, 1.0);
  const auto s = static_cast<long long>(splitters);
  // Bucket i holds keys in [splitter[i-1], splitter[i]); the most likely one for the k-th key:
  const long long m = std::clamp<long long>(
      static_cast<long long>(static_cast<double>(k) / (static_cast<double>(n) / static_cast<double>(s + 1))), 0, s);
  double cumulative = std::exp(log_binomial_pmf(splitters, static_cast<std::size_t>(m), p));
  long long r = 0;
  while (cumulative < p_k && (m - r > 0 || m + r < s)) {
    ++r;
    if (m - r >= 0) cumulative += std::exp(log_binomial_pmf(splitters, static_cast<std::size_t>(m - r), p));
    if (m + r <= s) cumulative += std::exp(log_binomial_pmf(splitters, static_cast<std::size_t>(m + r), p));
  }
  // Buckets m-r .. m+r are bounded by splitters m-r-1 and m+r.
  PivotWindow w;
  w.first = std::max<long long>(m - r - 1, -1);
  w.last = std::min<long long>(m + r, s);
  return w;
}

}  // namespace gpuclean::select

#include "clean/image_stats.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "select/cpu_reference.hpp"

namespace gpuclean::clean {

Peak find_peak(std::span<const float> image, std::span<const std::uint8_t> mask, bool allow_negative,
               int threads) {
  const auto n = static_cast<std::ptrdiff_t>(image.size());
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  // Below this size a parallel region costs more than it saves.
  const int used = n < (1 << 16) ? 1 : nt;
  std::vector<Peak> partial(static_cast<std::size_t>(used));
  std::vector<float> partial_key(static_cast<std::size_t>(used), -INFINITY);
#pragma omp parallel num_threads(used)
  {
    const int t = omp_get_thread_num();
    const std::ptrdiff_t begin = n * t / used;
    const std::ptrdiff_t end = n * (t + 1) / used;
    float best_key = -INFINITY;
    std::ptrdiff_t best = -1;
    for (std::ptrdiff_t i = begin; i < end; ++i) {
      if (!mask[static_cast<std::size_t>(i)]) continue;
      const float v = image[static_cast<std::size_t>(i)];
      const float key = allow_negative ? std::abs(v) : v;
      if (key > best_key) {  // strict: the first (lowest index) maximum wins
        best_key = key;
        best = i;
      }
    }
    partial[static_cast<std::size_t>(t)].index = best;
    partial_key[static_cast<std::size_t>(t)] = best_key;
  }
  Peak result;
  float best_key = -INFINITY;
  for (std::size_t t = 0; t < partial.size(); ++t) {  // threads in index order keep the tie rule
    if (partial[t].index >= 0 && partial_key[t] > best_key) {
      best_key = partial_key[t];
      result.index = partial[t].index;
    }
  }
  if (!allow_negative && result.index >= 0 && best_key <= 0.0f) result.index = -1;
  if (result.index >= 0) result.value = image[static_cast<std::size_t>(result.index)];
  return result;
}

namespace {

// Sums term(i) over [0, n) in fixed blocks, the block sums added in order: the same bits whatever
// the thread count, so that a run's statistics repeat exactly from one process to the next.
template <class Term>
double ordered_sum(std::size_t n, Term term) {
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(blocks, 0.0);
#pragma omp parallel for schedule(static)
  for (std::size_t b = 0; b < blocks; ++b) {
    double sum = 0.0;
    for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) sum += term(i);
    partial[b] = sum;
  }
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

}  // namespace

double rms(std::span<const float> image) {
  const double sum = ordered_sum(image.size(), [&](std::size_t i) {
    const double v = image[i];
    return std::isfinite(v) ? v * v : 0.0;
  });
  const double n = ordered_sum(image.size(), [&](std::size_t i) { return std::isfinite(image[i]) ? 1.0 : 0.0; });
  return n > 0 ? std::sqrt(sum / n) : 0.0;
}

double robust_sigma(std::span<const float> image) {
  std::vector<float> finite;
  finite.reserve(image.size());
  for (float v : image) {
    if (std::isfinite(v)) finite.push_back(v);
  }
  if (finite.empty()) return 0.0;
  const std::size_t mid = (finite.size() - 1) / 2;
  const float median = select::order_statistic_cpu(finite, mid);
  for (float& v : finite) v = std::abs(v - median);
  const float mad = select::order_statistic_cpu(finite, mid);
  return 1.4826 * static_cast<double>(mad);
}

double total_flux(std::span<const float> image) {
  return ordered_sum(image.size(), [&](std::size_t i) { return std::isfinite(image[i]) ? image[i] : 0.0; });
}

double positive_peak(std::span<const float> image) {
  double peak = 0.0;
  for (float v : image)
    if (std::isfinite(v) && v > peak) peak = v;
  return peak;
}

}  // namespace gpuclean::clean

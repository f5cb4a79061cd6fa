#include "data/value_distributions.hpp"

#include <cmath>
#include <limits>
#include <algorithm>
#include <numbers>
#include <stdexcept>

namespace gpuclean::data {
namespace {

// Counter-based: a value per (seed, index, stream), independent of thread layout.
inline std::uint64_t hash(std::uint64_t seed, std::uint64_t i, std::uint64_t stream = 0) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull + stream * 0xABC98388FB8FAC03ull + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline double unit(std::uint64_t seed, std::uint64_t i, std::uint64_t stream = 0) {
  return static_cast<double>(hash(seed, i, stream) >> 11) * 0x1.0p-53;
}
inline double gauss(std::uint64_t seed, std::uint64_t i) {
  const double u1 = std::max(unit(seed, i, 1), 1e-300), u2 = unit(seed, i, 2);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

template <class F>
void fill_with(std::span<float> out, F f) {
  const auto n = static_cast<std::ptrdiff_t>(out.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = f(static_cast<std::uint64_t>(i));
}

void uniform(std::span<float> o, std::uint64_t s) { fill_with(o, [s](auto i) { return static_cast<float>(unit(s, i)); }); }
void normal(std::span<float> o, std::uint64_t s) { fill_with(o, [s](auto i) { return static_cast<float>(gauss(s, i)); }); }
void half_normal(std::span<float> o, std::uint64_t s) {
  fill_with(o, [s](auto i) { return static_cast<float>(std::abs(gauss(s, i))); });
}
void cauchy(std::span<float> o, std::uint64_t s) {
  fill_with(o, [s](auto i) { return static_cast<float>(std::tan(std::numbers::pi * (unit(s, i) - 0.5))); });
}
void sorted_ascending(std::span<float> o, std::uint64_t) {
  const double n = static_cast<double>(o.size());
  fill_with(o, [n](auto i) { return static_cast<float>(static_cast<double>(i) / n); });
}
void sorted_descending(std::span<float> o, std::uint64_t) {
  const double n = static_cast<double>(o.size());
  fill_with(o, [n](auto i) { return static_cast<float>(1.0 - static_cast<double>(i) / n); });
}
void all_equal(std::span<float> o, std::uint64_t) { fill_with(o, [](auto) { return 0.75f; }); }
void few_distinct(std::span<float> o, std::uint64_t s) {
  fill_with(o, [s](auto i) { return static_cast<float>(hash(s, i) % 101); });
}
// 1 + 1e-4 U[0,1): every value in [1, 1.0001], about 840 distinct floats sharing their leading
// bits. A noise-dominated residual looks like this to a selection: long runs of equal keys.
void narrow(std::span<float> o, std::uint64_t s) {
  fill_with(o, [s](auto i) { return static_cast<float>(1.0 + 1e-4 * unit(s, i)); });
}
void huge_outlier(std::span<float> o, std::uint64_t s) {
  const std::uint64_t where = o.empty() ? 0 : hash(s, 0, 7) % o.size();
  fill_with(o, [s, where](auto i) { return i == where ? 3.0e38f : static_cast<float>(gauss(s, i)); });
}
void many_inf(std::span<float> o, std::uint64_t s) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  fill_with(o, [s](auto i) {
    const double u = unit(s, i, 3);
    return u < 0.3 ? kInf : u < 0.6 ? -kInf : static_cast<float>(gauss(s, i));
  });
}
void nan_sprinkled(std::span<float> o, std::uint64_t s) {
  fill_with(o, [s](auto i) {
    return unit(s, i, 4) < 0.05 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(gauss(s, i));
  });
}
// Thermal noise of 1e-4 plus a few hundred point sources up to 1: a CLEAN residual.
void noise_plus_point_sources(std::span<float> o, std::uint64_t s) {
  fill_with(o, [s](auto i) {
    float v = static_cast<float>(1e-4 * gauss(s, i));
    if (hash(s, i, 5) % 20000 == 0) v += static_cast<float>(std::pow(unit(s, i, 6), 3.0));
    return v;
  });
}

}  // namespace

const std::vector<ValueDistribution>& value_distributions() {
  static const std::vector<ValueDistribution> all = {
      {"uniform", uniform},
      {"normal", normal},
      {"half_normal", half_normal},
      {"cauchy", cauchy},
      {"sorted_ascending", sorted_ascending},
      {"sorted_descending", sorted_descending},
      {"all_equal", all_equal},
      {"few_distinct", few_distinct},
      {"narrow", narrow},
      {"huge_outlier", huge_outlier},
      {"many_inf", many_inf},
      {"nan_sprinkled", nan_sprinkled},
      {"noise_plus_point_sources", noise_plus_point_sources},
  };
  return all;
}

const ValueDistribution& value_distribution(const std::string& name) {
  // The name narrow had before the targets named it; kept for old command lines.
  const std::string wanted = name == "same_leading_bits" ? std::string("narrow") : name;
  for (const auto& d : value_distributions())
    if (d.name == wanted) return d;
  throw std::invalid_argument("unknown value distribution '" + name + "'");
}

}  // namespace gpuclean::data

#pragma once
// Named value distributions for selection tests and benchmarks, including the adversarial ones
// that break naive selection (GGKS's generateProblems, RAFT's select_k tests): duplicates,
// shared leading bits, infinities, NaN, a huge outlier, and what a CLEAN residual looks like.
// Values depend only on (distribution, seed, index), so any slice can be made in parallel.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpuclean::data {

struct ValueDistribution {
  std::string name;
  void (*fill)(std::span<float> out, std::uint64_t seed);
};

/// uniform, normal, half_normal, cauchy, sorted_ascending, sorted_descending, all_equal,
/// few_distinct (integers 0..100), narrow (1 + 1e-4 U[0,1): about 840 distinct floats), huge_outlier,
/// many_inf (±inf mixed into normal values), nan_sprinkled, noise_plus_point_sources.
const std::vector<ValueDistribution>& value_distributions();
/// One of the above by name ("same_leading_bits", narrow's former name, is accepted too); throws
/// std::invalid_argument for an unknown name.
const ValueDistribution& value_distribution(const std::string& name);

}  // namespace gpuclean::data

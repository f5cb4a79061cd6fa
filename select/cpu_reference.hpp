#pragma once
// CPU reference selection. It *defines* the semantics in select_types.hpp; every GPU backend is
// tested against it element for element. Built on std::nth_element: O(n) expected time.

#include <cstdint>
#include <span>
#include <vector>

#include "select/select_types.hpp"

namespace gpuclean::select {

/// The result of a top-k selection: the selected elements (their original values, sign kept)
/// and their indices in the input.
struct TopK {
  std::vector<float> values;
  std::vector<std::uint32_t> indices;
};

/// Top-k under the tie rule. Unsorted output comes in ascending index order. Throws
/// InvalidRequest when request.k > values.size().
TopK top_k_cpu(std::span<const float> values, const SelectRequest& request);

/// The key of the k-th best element (k >= 1), or NaN when k > n_valid or k == 0.
float kth_key_cpu(std::span<const float> values, std::size_t k, Order order);

/// The value of rank `rank` (0-based, ascending) among the non-NaN values; NaN when rank >= n_valid.
float order_statistic_cpu(std::span<const float> values, std::size_t rank);

/// Several order statistics at once (ranks in any order); one result per rank.
std::vector<float> multiselect_cpu(std::span<const float> values, std::span<const std::size_t> ranks);

/// Number of non-NaN elements whose key is strictly greater than `limit`.
std::size_t count_keys_above_cpu(std::span<const float> values, float limit, Order order);

}  // namespace gpuclean::select

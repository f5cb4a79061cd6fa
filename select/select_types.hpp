#pragma once
// Types shared by every selection backend. Host-compilable: no device code here.
//
// Semantics (all backends, CPU reference included):
//  * The key of an element x is x (kLargest), -x (kSmallest) or |x| (kLargestAbs); -0 and +0 are
//    equal keys.
//  * NaN keys are never selected; n_valid is the number of non-NaN elements.
//  * top-k returns exactly min(k, n_valid) elements: every element whose key beats the k-th key,
//    then, among elements whose key equals the k-th key, those with the lowest indices.
//  * Order statistics count ranks from 0 over the non-NaN values in ascending value order.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpuclean::select {

/// Which elements count as "largest".
enum class Order { kLargest, kSmallest, kLargestAbs };

std::string_view to_string(Order order);

/// A top-k request.
struct SelectRequest {
  std::size_t k = 0;
  Order order = Order::kLargestAbs;
  /// When true the output is sorted by key (best first), ties by index; otherwise any order.
  bool sorted_output = false;
};

/// The key of an element under an order: larger keys are selected first.
inline float select_key(float x, Order order) {
  switch (order) {
    case Order::kLargest: return x + 0.0f;  // folds -0 into +0
    case Order::kSmallest: return -x + 0.0f;
    case Order::kLargestAbs: return x < 0.0f ? -x : x + 0.0f;
  }
  return x;
}

}  // namespace gpuclean::select

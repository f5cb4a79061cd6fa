#pragma once
// Types shared by every selection backend. Host-compilable: no device code here.
//
// Semantics (all backends, CPU reference included):
//  * The key of an element x is x (kLargest), -x (kSmallest) or |x| (kLargestAbs); -0 and +0 are
//    equal keys.
//  * NaN keys are never selected; n_valid is the number of non-NaN elements.
//  * top-k returns exactly min(k, n_valid) elements: every element whose key beats the k-th key,
//    then, among elements whose key equals the k-th key, those with the lowest indices.
//  * k above n (the input's length, NaN included) is a caller's error, refused with InvalidRequest
//    by every backend (check_top_k): it cannot be met, and returning fewer would hide the mistake.
//    k = n is fine; k above n_valid only because of NaN returns n_valid elements, as above.
//  * Order statistics count ranks from 0 over the non-NaN values in ascending value order.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
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

/// A request no input can meet (k above n): a usage error, never a fault of the data.
class InvalidRequest : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Throws InvalidRequest when request.k > n. Every top-k entry point (CPU reference, each GPU
/// backend through Selector::top_k, the Python package, bench select) calls it before any work.
void check_top_k(std::size_t n, const SelectRequest& request);

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

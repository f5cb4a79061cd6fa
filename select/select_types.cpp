#include "select/select_types.hpp"

#include <string>

namespace gpuclean::select {

std::string_view to_string(Order order) {
  switch (order) {
    case Order::kLargest: return "largest";
    case Order::kSmallest: return "smallest";
    case Order::kLargestAbs: return "largest-abs";
  }
  return "unknown";
}

void check_top_k(std::size_t n, const SelectRequest& request) {
  if (request.k <= n) return;
  throw InvalidRequest("top-k: k = " + std::to_string(request.k) + " is more than the " + std::to_string(n) +
                       " elements given; give k <= " + std::to_string(n) + ".");
}

}  // namespace gpuclean::select

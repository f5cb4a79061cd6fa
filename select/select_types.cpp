#include "select/select_types.hpp"

namespace gpuclean::select {

std::string_view to_string(Order order) {
  switch (order) {
    case Order::kLargest: return "largest";
    case Order::kSmallest: return "smallest";
    case Order::kLargestAbs: return "largest-abs";
  }
  return "unknown";
}

}  // namespace gpuclean::select

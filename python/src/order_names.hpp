#pragma once
// Python spells the orders with underscores (largest_abs); the library's names use a dash.

#include <string>

#include "clean/errors.hpp"
#include "select/select_types.hpp"

namespace gpuclean::python {

inline select::Order parse_order(const std::string& name) {
  for (select::Order o : {select::Order::kLargest, select::Order::kSmallest, select::Order::kLargestAbs}) {
    std::string n(select::to_string(o));
    for (char& c : n) c = c == '-' ? '_' : c;
    if (n == name) return o;
  }
  throw clean::InvalidSettings("order must be largest, smallest or largest_abs, not '" + name + "'");
}

}  // namespace gpuclean::python

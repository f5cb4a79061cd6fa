#pragma once
// Selection backends by name. Filled by an explicit function, not by static self-registration:
// a static library drops object files nothing references, and a backend would vanish silently.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "select/selector.hpp"

namespace gpuclean::select {

class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Selector>()>;
  void add(std::string name, std::string description, Factory make);
  /// Throws std::invalid_argument listing the valid names when `name` is unknown.
  std::unique_ptr<Selector> make(std::string_view name) const;
  std::vector<std::string> names() const;
  std::string description(std::string_view name) const;
  bool contains(std::string_view name) const;

 private:
  struct Entry {
    std::string name, description;
    Factory make;
  };
  std::vector<Entry> entries_;
};

/// Registers every built-in backend: auto (a dispatcher over the others, the default), cpu, sort,
/// randomized, sample, sample-approx, bucket, cutting-plane.
void register_builtin_backends(Registry& registry);

/// A registry with the built-in backends.
const Registry& builtin_registry();

}  // namespace gpuclean::select

#include "select/backend_names.hpp"

#include <algorithm>

namespace gpuclean::select {

const std::vector<std::string>& clean_backend_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const BackendName& b : kBackendNames)
      if (b.for_clean) out.emplace_back(b.name);
    return out;
  }();
  return names;
}

bool is_clean_backend(std::string_view name) {
  const auto& names = clean_backend_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string clean_backend_list() {
  std::string list;
  for (const auto& n : clean_backend_names()) list += (list.empty() ? "" : ", ") + n;
  return list;
}

}  // namespace gpuclean::select

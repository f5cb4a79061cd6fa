#include "select/registry.hpp"

#include <stdexcept>

#include "select/backends/auto_select.hpp"
#include "select/backends/backends.hpp"

namespace gpuclean::select {

void Registry::add(std::string name, std::string description, Factory make) {
  if (contains(name)) throw std::invalid_argument("selection backend '" + name + "' registered twice");
  entries_.push_back({std::move(name), std::move(description), std::move(make)});
}

bool Registry::contains(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return true;
  return false;
}

std::unique_ptr<Selector> Registry::make(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return e.make();
  std::string valid;
  for (const auto& e : entries_) valid += (valid.empty() ? "" : ", ") + e.name;
  throw std::invalid_argument("unknown selection backend '" + std::string(name) + "'; valid: " + valid);
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

std::string Registry::description(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return e.description;
  return {};
}

void register_builtin_backends(Registry& r) {
  r.add("auto", "the default: per call, the fastest exact backend for n, k, the operation and the data (measured rule)",
        make_auto_selector);
  r.add("cpu", "CPU reference (std::nth_element); copies the input to the host", make_cpu_selector);
  r.add("sort", "sort-and-choose with CUB radix sort: the baseline", make_sort_selector);
  r.add("randomized", "two-pivot Las Vegas top-k (Monroe et al., HPG 2011)", make_randomized_selector);
  r.add("sample", "SampleSelect (Ribizel & Anzt 2019)", make_sample_selector);
  r.add("sample-approx", "approximate SampleSelect: order statistics to within one bucket (not exact)",
        make_sample_approx_selector);
  r.add("bucket", "bucketMultiSelect (Blanchard et al.): kernel-density buckets by linear projection", make_bucket_selector);
  r.add("cutting-plane", "Kelley's cutting-plane order statistics (Beliakov 2011) with copy_if and sort",
        make_cutting_plane_selector);
}

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry r;
    register_builtin_backends(r);
    return r;
  }();
  return registry;
}

}  // namespace gpuclean::select
